import Foundation
import PushlineAPNSMock
import PushlineKafka
import PushlineTestSupport
import Synchronization
import Testing

/// Holds and group membership (SystemicHoldTests' other half, a suite of its own so that the two
/// run at the same time): held work handed to the partitions' next owner, at a shutdown and a
/// rebalance.
@Suite(.serialized) struct SystemicHoldMembershipTests {
    @Test func shutdownDuringAHoldLeavesTheHeldJobsToTheNextMember() async throws {
        let harness = try await Harness.start { configuration in
            configuration.outageStatus = 503
            configuration.outageReason = "ServiceUnavailable"
            configuration.outageSeconds = 25
        }
        let (values, keys, tokens) = WorkerEndToEndTests.jobs(500, tokensPerJob: 4)
        let reports = try await harness.produce(values, keys: keys)
        let first = try harness.startWorker()
        try await waitUntil("the app to be held", timeout: .seconds(60)) {
            (try? await harness.scrape("/readyz"))?.1.contains("held") ?? false
        }
        let stopping = ContinuousClock.now
        first.terminate()
        // The group allows the shutdown `worker.shutdown_timeout_ms` + 15 s (45 s) before it
        // cancels what is left; a little more, so that a slow host's clean exit is not killed.
        #expect(await first.waitForExit(timeout: .seconds(60)) == 0, "worker log:\n\(first.log.suffix(2000))")
        let shutdown = ContinuousClock.now - stopping
        // The shutdown does not wait for held work: the drain ends as soon as all that is left is
        // held, and says so. (Waiting, it would have ended `finished`, when the outage ended and
        // the held jobs completed, or `timedOut`.) Not a clock: on a loaded CI host the whole
        // shutdown took 39 s, most of it spent after the drain.
        let drained = first.log.split(separator: "\n").filter { $0.contains("shutdown timeout: jobs left unfinished") }
        #expect(
            drained.count == 1 && drained.allSatisfy { $0.contains("onlyHeldWorkLeft") },
            "the drain ended because only held work was left: \(drained)\nworker log:\n\(first.log.suffix(3000))"
        )
        print("shutdown during a hold: the first worker exited \(shutdown) after SIGTERM; drain: \(drained)")

        // The next member waits out the rest of the outage and delivers everything.
        let second = try harness.startWorker()
        let results = try await harness.read(Harness.resultsTopic, timeout: .seconds(180)) {
            SystemicHoldTests.byToken($0).count >= tokens.count
        }
        let byToken = SystemicHoldTests.byToken(results)
        #expect(byToken.count == tokens.count, "none lost")
        let finals = byToken.values.flatMap { $0 }
        #expect(finals.allSatisfy { $0["status"] as? Int == 200 }, "\(finals.filter { $0["status"] as? Int != 200 }.prefix(3))")
        second.terminate()
        #expect(await second.waitForExit(timeout: .seconds(40)) == 0)
        let (committedAll, offsets) = try await harness.everythingCommitted(reports)
        #expect(committedAll, "committed offsets: \(offsets)")
        await harness.stop()
    }

    /// A member joins while the app is held: the old owner withdraws the held notifications of
    /// the partitions it gives up (instead of waiting out the revoke's bound and sending them when
    /// APNs heals, as the new owner does too), and every notification is delivered once.
    @Test func aRebalanceDuringAHoldSendsEveryHeldNotificationOnce() async throws {
        let harness = try await Harness.start { configuration in
            configuration.outageStatus = 503
            configuration.outageReason = "ServiceUnavailable"
            configuration.outageSeconds = 30
        }
        let watcher = try await ResultWatcher.start(harness)
        let (values, keys, tokens) = WorkerEndToEndTests.jobs(400, tokensPerJob: 4, prefix: "held")
        _ = try await harness.produce(values, keys: keys)
        let first = try harness.startWorker()
        try await waitUntil("the app to be held", timeout: .seconds(60)) {
            (try? await harness.scrape("/metrics"))?.1.contains(#"pushline_app_held{app="default"} 1"#) ?? false
        }

        let (second, port, owned) = try await ScaleOutTests.joinSecondWorker(harness, timeout: .seconds(60))
        // Within the 30 s outage, so that what follows is about held work (the scale-out goal itself,
        // 10 s, is ScaleOutTests', which run alone; this suite shares the machine with others).
        #expect(owned < .seconds(25), "the newcomer owned partitions \(owned) after joining")
        #expect(first.log.contains("withdrew"), "the old owner withdrew the held work:\n\(first.log.suffix(3000))")
        #expect(!first.log.contains("drain timed out"), "the revoke did not wait out its bound")
        #expect(watcher.deliveredTokens.distinct == 0, "nothing was delivered during the outage")

        try await waitUntil("every notification delivered", timeout: .seconds(180)) {
            watcher.deliveredTokens.distinct >= tokens.count
        }
        try await Task.sleep(for: .seconds(2))
        let (distinct, duplicates) = watcher.deliveredTokens
        #expect(distinct == tokens.count, "nothing missing")
        #expect(duplicates == 0, "no notification sent twice")
        let stats = harness.mock.stats
        #expect(
            stats.requests - stats.outageAnswers == tokens.count,
            "APNs answered each notification once outside the outage: \(stats.byStatus)"
        )
        print("rebalance during a hold: newcomer owned partitions after \(owned); \(distinct) delivered, \(duplicates) duplicates")
        await ScaleOutTests.stop([first, second], watcher, harness)
        _ = port
    }
}
