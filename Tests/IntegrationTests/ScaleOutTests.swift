import Foundation
import PushlineTestSupport
import Synchronization
import Testing

/// Scaling the group under load, APNs latency-bound (4 connections x 7 streams x 50 ms: about
/// 560 notifications a second per worker): a newcomer takes its share within seconds, a graceful
/// handover re-sends nothing, and a crash re-sends at most what the worker reported uncommitted.
@Suite(.serialized, .timeLimit(.minutes(4))) struct ScaleOutTests {
    static let jobs = 1000
    static let tokensPerJob = 20

    /// `Self.jobs` jobs of `Self.tokensPerJob` tokens, or as many tokens in jobs of `tokensPerJob`.
    static func start(tokensPerJob: Int = Self.tokensPerJob) async throws -> (Harness, ResultWatcher, Int) {
        let harness = try await Harness.start { mock in
            mock.latencyMilliseconds = 50
            mock.maxStreams = 7
        }
        let watcher = try await ResultWatcher.start(harness)
        let total = Self.jobs * Self.tokensPerJob
        let (values, keys, _) = WorkerEndToEndTests.jobs(total / tokensPerJob, tokensPerJob: tokensPerJob, prefix: "scale")
        _ = try await harness.produce(values, keys: keys)
        return (harness, watcher, total)
    }

    /// A second worker, with a metrics port of its own.
    static func secondWorker(_ harness: Harness) throws -> (WorkerProcess, ReservedPort) {
        let port = try ReservedPort()
        let worker = try harness.startWorker(environment: ["METRICS_LISTEN": "127.0.0.1:\(port.port)"])
        return (worker, port)
    }

    /// Starts a second worker and waits until it owns partitions; also returns how long that took.
    static func joinSecondWorker(_ harness: Harness, timeout: Duration) async throws -> (WorkerProcess, ReservedPort, Duration) {
        let joined = ContinuousClock.now
        let (second, port) = try secondWorker(harness)
        try await waitUntil("the newcomer owns partitions", timeout: timeout, interval: .milliseconds(100)) {
            second.log.contains("rebalance: assigned")
        }
        return (second, port, ContinuousClock.now - joined)
    }

    /// Stops the workers (each must exit 0), then the watcher and the harness.
    static func stop(_ workers: [WorkerProcess], _ watcher: ResultWatcher, _ harness: Harness) async {
        for worker in workers { worker.terminate() }
        for worker in workers {
            let status = await worker.waitForExit(timeout: .seconds(40))
            #expect(status == 0, "worker log:\n\(worker.log.suffix(2000))")
        }
        await watcher.stop()
        await harness.stop()
    }

    /// Waits until every notification has a delivery record (and a second more, for late
    /// duplicates), expects none missing, and returns the duplicate records.
    static func everyNotificationDelivered(_ watcher: ResultWatcher, total: Int, timeout: Duration) async throws -> Int {
        try await waitUntil("every notification delivered", timeout: timeout) { watcher.deliveredTokens.distinct >= total }
        try await Task.sleep(for: .seconds(1))
        let (distinct, duplicates) = watcher.deliveredTokens
        #expect(distinct == total, "nothing missing")
        return duplicates
    }

    /// Deliveries per second over `duration`.
    static func rate(_ watcher: ResultWatcher, over duration: Duration) async throws -> Double {
        let before = watcher.deliveries(prefix: "scale-")
        let start = ContinuousClock.now
        try await Task.sleep(for: duration)
        return Double(watcher.deliveries(prefix: "scale-") - before) / ((ContinuousClock.now - start) / .seconds(1))
    }

    /// Also with single-token jobs, which the pipeline completes in groups: a group may span the
    /// revoked partitions and kept ones, and must still hand over nothing twice.
    @Test(arguments: [Self.tokensPerJob, 1])
    func aNewcomerTakesItsShareWithinSecondsAndTheHandoverResendsNothing(tokensPerJob: Int) async throws {
        let (harness, watcher, total) = try await Self.start(tokensPerJob: tokensPerJob)
        let first = try harness.startWorker()
        try await waitUntil("the first worker is under way", timeout: .seconds(90)) { watcher.deliveries(prefix: "scale-") >= total / 20 }
        let oneWorker = try await Self.rate(watcher, over: .seconds(4))
        #expect(watcher.deliveries(prefix: "scale-") <= total * 35 / 100, "the newcomer joins early in the campaign")

        let (second, port, owned) = try await Self.joinSecondWorker(harness, timeout: .seconds(30))
        #expect(owned < .seconds(10), "the newcomer owned partitions \(owned) after joining")
        try await Task.sleep(for: .seconds(1))
        let twoWorkers = try await Self.rate(watcher, over: .seconds(6))
        #expect(twoWorkers >= 1.8 * oneWorker, "two workers \(Int(twoWorkers))/s, one worker \(Int(oneWorker))/s")

        let duplicates = try await Self.everyNotificationDelivered(watcher, total: total, timeout: .seconds(120))
        #expect(duplicates == 0, "no notification sent twice")
        #expect(first.log.contains("rebalance: revoking"), "the handover is in the first worker's log")
        #expect(!first.log.contains("drain timed out"), "the revoke drain finished within its bound")
        print(
            "scale-out (\(tokensPerJob) per job): newcomer owned partitions after \(owned); \(Int(oneWorker))/s -> \(Int(twoWorkers))/s (\(String(format: "%.2f", twoWorkers / oneWorker))x); \(duplicates) duplicates"
        )
        await Self.stop([first, second], watcher, harness)
        _ = port
    }

    /// A revoke whose drain times out (APNs answers after 3 s, the bound is 2 s): the old owner
    /// withdraws what it has not sent, so only requests already on the wire (at most its streams)
    /// go twice, and both workers still exit cleanly.
    @Test func aRevokeThatTimesOutSendsNothingUnsentAfterTheHandover() async throws {
        let harness = try await Harness.start(shutdownTimeoutMilliseconds: 2000) { mock in
            mock.latencyMilliseconds = 3000
            mock.maxStreams = 5
        }
        let watcher = try await ResultWatcher.start(harness)
        let (values, keys, tokens) = WorkerEndToEndTests.jobs(100, tokensPerJob: 2, prefix: "slow")
        _ = try await harness.produce(values, keys: keys)
        let first = try harness.startWorker()
        try await waitUntil("the first worker owns partitions", timeout: .seconds(60), interval: .milliseconds(100)) {
            first.log.contains("rebalance: assigned")
        }
        // The handover must find requests on the wire: a connection's streams full at the mock.
        try await waitUntil("requests on the wire", timeout: .seconds(30), interval: .milliseconds(50)) {
            harness.mock.stats.maxOpenStreams >= 5
        }
        let (second, port, _) = try await Self.joinSecondWorker(harness, timeout: .seconds(60))
        #expect(first.log.contains("revoke drain timed out"), "the drain reached its bound")
        #expect(first.log.contains("withdrew"), "and the unsent work was withdrawn")

        try await waitUntil("every notification delivered", timeout: .seconds(150)) {
            watcher.deliveredTokens.distinct >= tokens.count
        }
        // Late answers of requests that were on the wire at the handover.
        try await Task.sleep(for: .seconds(4))
        let (distinct, duplicates) = watcher.deliveredTokens
        #expect(distinct == tokens.count, "nothing missing")
        // 4 connections x 5 streams were on the wire; without the withdrawal the old owner sent
        // its whole backlog again after the handover.
        #expect(duplicates <= 20, "only requests on the wire went twice: \(duplicates)")
        print("revoke drain timeout: \(distinct) delivered, \(duplicates) duplicates")
        await Self.stop([first, second], watcher, harness)
        _ = port
    }

    @Test func aGracefulScaleInResendsNothingAndTheSurvivorTakesOverWithinSeconds() async throws {
        let (harness, watcher, total) = try await Self.start()
        let first = try harness.startWorker()
        let (second, port) = try Self.secondWorker(harness)
        try await waitUntil("both workers own partitions", timeout: .seconds(60), interval: .milliseconds(100)) {
            first.log.contains("rebalance: assigned") && second.log.contains("rebalance: assigned")
                && watcher.deliveries(prefix: "scale-") >= total / 5
        }
        let stopping = ContinuousClock.now
        second.terminate()
        let logBefore = first.log.components(separatedBy: "rebalance: assigned").count
        try await waitUntil("the survivor takes over", timeout: .seconds(30), interval: .milliseconds(100)) {
            first.log.components(separatedBy: "rebalance: assigned").count > logBefore && first.log.contains("now own 4")
        }
        let takeover = ContinuousClock.now - stopping
        #expect(takeover < .seconds(10), "the survivor owned every partition \(takeover) after SIGTERM")
        #expect(await second.waitForExit(timeout: .seconds(40)) == 0)

        let duplicates = try await Self.everyNotificationDelivered(watcher, total: total, timeout: .seconds(150))
        #expect(duplicates == 0, "no notification sent twice")
        print("scale-in: survivor took over after \(takeover); \(duplicates) duplicates")
        first.terminate()
        #expect(await first.waitForExit(timeout: .seconds(40)) == 0)
        _ = port
        await watcher.stop()
        await harness.stop()
    }

    @Test func aCrashResendsAtMostWhatTheWorkerReportedUncommitted() async throws {
        let (harness, watcher, total) = try await Self.start()
        let first = try harness.startWorker()
        try await waitUntil("the worker is under way", timeout: .seconds(90)) { watcher.deliveries(prefix: "scale-") >= total / 5 }
        // The gauge is sampled every 250 ms: the highest of the last second's answers.
        var reported = 0
        for _ in 0..<5 {
            let (_, metrics) = try await harness.scrape("/metrics")
            let line = metrics.split(separator: "\n").first { $0.hasPrefix("pushline_uncommitted_notifications ") }
            reported = max(reported, Int(Double(line?.split(separator: " ").last ?? "") ?? 0))
            try await Task.sleep(for: .milliseconds(200))
        }
        first.kill9()
        _ = await first.waitForExit(timeout: .seconds(10))
        #expect(reported > 0)

        let (second, port) = try Self.secondWorker(harness)
        let duplicates = try await Self.everyNotificationDelivered(watcher, total: total, timeout: .seconds(150))
        #expect(duplicates <= reported, "\(duplicates) duplicates after the crash; the worker reported \(reported) uncommitted")
        print("SIGKILL: \(duplicates) duplicates, \(reported) reported uncommitted just before")
        second.terminate()
        #expect(await second.waitForExit(timeout: .seconds(40)) == 0)
        _ = port
        await watcher.stop()
        await harness.stop()
    }
}
