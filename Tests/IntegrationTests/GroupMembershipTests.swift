import Foundation
import PushlineTestSupport
import Testing

/// Issue 27: members that leave or die while a join's rebalance is under way (what autoscalers
/// and rolling restarts do). The members that stay must own every partition and finish the
/// campaign: every token's final record, every job's offset committed. The Kafka-outage cases
/// (a TCP forwarder cut) are chaos rows: scripts/chaos/membership, which CI runs.
@Suite(.serialized, .timeLimit(.minutes(6))) struct GroupMembershipTests {
    static let jobs = 800
    static let tokensPerJob = 10

    enum Departure: Sendable, CustomStringConvertible {
        case sigterm(afterMilliseconds: Int)
        case sigkill(afterMilliseconds: Int)

        var description: String {
            switch self {
            case .sigterm(let after): "SIGTERM \(after) ms after the newcomer subscribed"
            case .sigkill(let after): "SIGKILL \(after) ms after the newcomer subscribed"
            }
        }
    }

    /// About 1,000 notifications a second per worker (4 connections x 10 streams / 40 ms), so the
    /// departures land in the middle of the campaign.
    static func start() async throws -> (Harness, ResultWatcher, [DeliveryReportEnd]) {
        let harness = try await Harness.start(shutdownTimeoutMilliseconds: 10_000) { mock in
            mock.latencyMilliseconds = 40
            mock.maxStreams = 10
        }
        let watcher = try await ResultWatcher.start(harness)
        let (values, keys, _) = WorkerEndToEndTests.jobs(Self.jobs, tokensPerJob: Self.tokensPerJob, prefix: "member")
        let reports = try await harness.produce(values, keys: keys)
        return (harness, watcher, reports.map { DeliveryReportEnd(partition: $0.partition, offset: $0.offset) })
    }

    struct DeliveryReportEnd: Sendable {
        var partition: Int32
        var offset: Int64
    }

    /// Waits for the newcomer's consumer to subscribe, then `pause`.
    static func afterSubscribing(_ worker: WorkerProcess, pause milliseconds: Int) async throws {
        try await waitUntil("the newcomer subscribed", timeout: .seconds(60), interval: .milliseconds(10)) {
            worker.log.contains("Kafka consumer subscribed")
        }
        try await Task.sleep(for: .milliseconds(milliseconds))
    }

    /// Every token delivered and every job's offset committed (the end offsets come from the
    /// producer's delivery reports: the embedded broker's ListOffsets answers are wrong).
    static func everythingDoneAndCommitted(
        _ harness: Harness,
        _ watcher: ResultWatcher,
        _ ends: [DeliveryReportEnd]
    ) async throws
        -> Int
    {
        let total = Self.jobs * Self.tokensPerJob
        let duplicates = try await ScaleOutTests.everyNotificationDelivered(watcher, total: total, timeout: .seconds(180))
        var last: [Int32: Int64] = [:]
        for end in ends { last[end.partition] = max(last[end.partition] ?? 0, end.offset + 1) }
        // The last commits come within a commit interval of the last results, or at the leave.
        var committed: [Int32: Int64?] = [:]
        try? await waitUntil("every job's offset committed", timeout: .seconds(30), interval: .milliseconds(500)) {
            committed = try await harness.committedOffsets()
            return last.allSatisfy { partition, end in (committed[partition] ?? nil) == end }
        }
        let description = last.keys.sorted().map { "p\($0): \(String(describing: committed[$0] ?? nil)) of \(last[$0]!)" }
        #expect(last.allSatisfy { partition, end in (committed[partition] ?? nil) == end }, "committed: \(description)")
        return duplicates
    }

    @Test(arguments: [
        Departure.sigterm(afterMilliseconds: 100), .sigterm(afterMilliseconds: 500), .sigterm(afterMilliseconds: 1000),
        .sigkill(afterMilliseconds: 500),
    ])
    func aMemberThatLeavesDuringAJoinsRebalanceHandsEverythingOver(_ departure: Departure) async throws {
        let (harness, watcher, ends) = try await Self.start()
        let total = Self.jobs * Self.tokensPerJob
        let first = try harness.startWorker()
        try await waitUntil("the first worker is under way", timeout: .seconds(90)) { watcher.deliveries(prefix: "member-") >= total / 5 }
        let (second, port) = try ScaleOutTests.secondWorker(harness)
        let delay: Int
        switch departure {
        case .sigterm(let after), .sigkill(let after): delay = after
        }
        try await Self.afterSubscribing(second, pause: delay)
        let left = ContinuousClock.now
        if case .sigkill = departure { first.kill9() } else { first.terminate() }
        try await waitUntil("the newcomer owns every partition", timeout: .seconds(90), interval: .milliseconds(100)) {
            second.log.contains("now own 4")
        }
        let takeover = ContinuousClock.now - left
        let duplicates = try await Self.everythingDoneAndCommitted(harness, watcher, ends)
        if case .sigterm = departure {
            #expect(await first.waitForExit(timeout: .seconds(40)) == 0, "worker log:\n\(first.log.suffix(2000))")
            #expect(duplicates == 0, "a graceful leave re-sends nothing")
        } else {
            _ = await first.waitForExit(timeout: .seconds(10))
        }
        print("\(departure): the newcomer owned every partition \(takeover) later; \(duplicates) duplicates")
        second.terminate()
        #expect(await second.waitForExit(timeout: .seconds(40)) == 0)
        _ = port
        await watcher.stop()
        await harness.stop()
    }

    @Test func twoMembersThatLeaveTogetherDuringAJoinsRebalanceHandEverythingOver() async throws {
        let (harness, watcher, ends) = try await Self.start()
        let total = Self.jobs * Self.tokensPerJob
        let first = try harness.startWorker()
        let (second, secondPort) = try ScaleOutTests.secondWorker(harness)
        try await waitUntil("both workers are under way", timeout: .seconds(90)) {
            second.log.contains("rebalance: assigned") && watcher.deliveries(prefix: "member-") >= total / 5
        }
        let (third, thirdPort) = try ScaleOutTests.secondWorker(harness)
        try await Self.afterSubscribing(third, pause: 500)
        first.terminate()
        second.terminate()
        do {
            try await waitUntil("the third worker owns every partition", timeout: .seconds(90), interval: .milliseconds(100)) {
                third.log.contains("now own 4")
            }
        } catch {
            // What each member did, for the one run in many where the group does not settle.
            for (name, worker) in [("first", first), ("second", second), ("third", third)] {
                Issue.record("\(name) worker's log:\n\(worker.log.suffix(6000))")
            }
            throw error
        }
        let duplicates = try await Self.everythingDoneAndCommitted(harness, watcher, ends)
        #expect(duplicates == 0, "graceful leaves re-send nothing")
        for worker in [first, second] {
            #expect(await worker.waitForExit(timeout: .seconds(40)) == 0, "worker log:\n\(worker.log.suffix(2000))")
        }
        third.terminate()
        #expect(await third.waitForExit(timeout: .seconds(40)) == 0)
        _ = (secondPort, thirdPort)
        await watcher.stop()
        await harness.stop()
    }
}
