import Foundation
import PushlineTestSupport
import Synchronization
import Testing

/// Scaling the group under load, APNs latency-bound (4 connections x 7 streams x 50 ms: about
/// 560 notifications a second per worker): a newcomer takes its share within seconds, a graceful
/// handover re-sends nothing (the faults' cases: ScaleOutFaultTests).
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
}
