import Foundation
import PushlineKafka
import PushlineTestSupport
import Synchronization
import Testing

/// Cancelling a campaign through the real pieces: `pushline cancel` (the binary) writes to the
/// control topic of the embedded broker, every worker process reads it, and the mock's recording
/// (`--record`, with each request's arrival time) shows what still reached APNs.
@Suite(.serialized, .timeLimit(.minutes(4))) struct CancelEndToEndTests {
    /// Jobs of `campaign`: `count` jobs of `tokensPerJob` tokens, ids `<prefix>-<n>`, tokens of
    /// job numbers from `firstJob` (distinct across calls that use distinct ranges).
    static func jobs(
        _ count: Int,
        tokensPerJob: Int,
        prefix: String,
        campaign: String,
        firstJob: Int
    ) -> (values: [[UInt8]], keys: [String], tokens: [String]) {
        var values: [[UInt8]] = []
        var keys: [String] = []
        var tokens: [String] = []
        for job in 0..<count {
            let jobTokens = (0..<tokensPerJob).map { deviceToken(job: firstJob + job, index: $0) }
            tokens += jobTokens
            let id = "\(prefix)-\(job)"
            let list = jobTokens.map { "\"\($0)\"" }.joined(separator: ",")
            values.append(Array(#"{"id":"\#(id)","campaign":"\#(campaign)","tokens":[\#(list)],"payload":{"aps":{"alert":"sale"}}}"#.utf8))
            keys.append(id)
        }
        return (values, keys, tokens)
    }

    /// Runs `pushline cancel` against the harness's configuration; its exit status, and when
    /// Kafka stamped the record (unix ms, from its output).
    static func cancel(
        _ harness: Harness,
        _ arguments: [String]
    ) async throws -> (status: Int32, writtenMilliseconds: Int64?, output: String) {
        let (status, stdout, stderr) = try await runPushline(["cancel", "--config", harness.configPath] + arguments)
        let written = stdout.split(separator: " ").last.flatMap { Int64($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        return (status, written, stdout + stderr)
    }

    /// The mock's recorded requests (complete once the mock stopped): token -> arrival times.
    static func recorded(_ path: String) throws -> [String: [Int64]] {
        var arrivals: [String: [Int64]] = [:]
        for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
            let entry = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let token = try #require(entry["token"] as? String)
            arrivals[token, default: []].append(try #require((entry["received_ms"] as? NSNumber)?.int64Value))
        }
        return arrivals
    }

    @Test(.timeLimit(.minutes(3)))
    func aCampaignCancelledAt30PercentOnTwoWorkersSendsNothingASecondLaterAndEndsEveryToken() async throws {
        let recording = try ProjectPaths.temporaryDirectory("cancel").appendingPathComponent("requests.jsonl").path
        // About 2,000 notifications a second per worker (4 connections x 50 streams x 100 ms): the
        // campaign takes over ten seconds, so the cancel (a process of its own, slow to start on a
        // loaded host) lands while most of it is still to send.
        let harness = try await Harness.start { mock in
            mock.latencyMilliseconds = 100
            mock.maxStreams = 50
            mock.recordFile = recording
        }
        let watcher = try await CancelWatcher.start(harness)
        let first = try harness.startWorker()
        let (second, secondPort) = try ScaleOutTests.secondWorker(harness)
        defer { _ = secondPort }
        try await waitUntil("both workers own partitions", timeout: .seconds(60), interval: .milliseconds(100)) {
            second.log.contains("rebalance: assigned") && first.log.contains("rebalance: assigned")
        }
        let campaign = Self.jobs(500, tokensPerJob: 100, prefix: "spring", campaign: "spring", firstJob: 0)
        let other = Self.jobs(20, tokensPerJob: 100, prefix: "autumn", campaign: "autumn", firstJob: 1000)
        // The other campaign's jobs among the first of the campaign's.
        var values: [[UInt8]] = []
        var keys: [String] = []
        for index in 0..<campaign.values.count {
            values.append(campaign.values[index])
            keys.append(campaign.keys[index])
            if index % 5 == 0, index / 5 < other.values.count {
                values.append(other.values[index / 5])
                keys.append(other.keys[index / 5])
            }
        }
        let reports = try await harness.produce(values, keys: keys)
        let total = campaign.tokens.count
        try await waitUntil("30% of the campaign's results", timeout: .seconds(90), interval: .milliseconds(10)) {
            watcher.finals(prefix: "spring-") >= total * 3 / 10
        }
        let (status, written, output) = try await Self.cancel(harness, ["--campaign", "spring", "--reason", "wrong link"])
        #expect(status == 0, "\(output)")
        let cancelledAt = try #require(written, "the CLI prints the record's timestamp: \(output)")
        try await waitUntil("every job done", timeout: .seconds(90), interval: .milliseconds(100)) {
            watcher.jobsDone >= values.count
        }
        let state = watcher.snapshot
        for worker in [first, second] {
            worker.terminate()
        }
        for worker in [first, second] {
            #expect(await worker.waitForExit(timeout: .seconds(40)) == 0, "worker log:\n\(worker.log.suffix(2000))")
            #expect(worker.log.contains("cancel seen"), "each worker logs the cancel it saw")
        }
        await watcher.stop()
        let (committed, offsets) = try await harness.everythingCommitted(reports)
        #expect(committed, "every job's offset committed: \(offsets)")
        await harness.stop()

        // Every token: exactly one final record, delivered or cancelled.
        var cancelled = 0
        for (index, token) in campaign.tokens.enumerated() {
            let finals = state.finals["spring-\(index / 100)/\(token)"] ?? []
            #expect(finals.count == 1, "spring-\(index / 100) token \(index % 100): \(finals)")
            guard let final = finals.first else { continue }
            #expect(final == "200" || final == "0 cancelled", "\(final)")
            if final == "0 cancelled" { cancelled += 1 }
        }
        #expect(cancelled >= total / 5, "the cancel stopped a good part of the campaign: \(cancelled) of \(total)")
        // The other campaign went out whole.
        for (index, token) in other.tokens.enumerated() {
            #expect(state.finals["autumn-\(index / 100)/\(token)"] == ["200"], "autumn token \(index)")
        }
        // job_done counts add up to each job's tokens; the cancelled ones are counted as such.
        var doneCancelled = 0
        for key in keys {
            let counts = try #require(state.jobDone[key], "job_done of \(key)")
            #expect(counts.values.reduce(0, +) == 100, "\(key): \(counts)")
            doneCancelled += counts["0 cancelled"] ?? 0
        }
        #expect(doneCancelled == cancelled)

        // The mock: no request of the campaign arrived more than a second after the cancel was
        // written (those already on the wire arrived before it).
        let arrivals = try Self.recorded(recording)
        let late = campaign.tokens.flatMap { arrivals[$0] ?? [] }.filter { $0 > cancelledAt + 1000 }
        let last = campaign.tokens.compactMap { arrivals[$0]?.max() }.max() ?? 0
        print(
            "cancel: \(cancelled) of \(total) tokens cancelled; the campaign's last request reached the mock "
                + "\(last - cancelledAt) ms after the cancel was written"
        )
        #expect(late.isEmpty, "\(late.count) requests more than 1 s after the cancel; the last \(last - cancelledAt) ms after")
        #expect(campaign.tokens.allSatisfy { (arrivals[$0]?.count ?? 0) <= 1 }, "no token sent twice")
        #expect(other.tokens.allSatisfy { arrivals[$0]?.count == 1 })
    }

    @Test func aCancelWrittenBeforeTheJobsArriveHoldsForThemAndAnUndoLetsLaterJobsGo() async throws {
        let recording = try ProjectPaths.temporaryDirectory("cancel").appendingPathComponent("requests.jsonl").path
        let harness = try await Harness.start { $0.recordFile = recording }
        // Before any worker runs: the worker reads it at boot.
        let early = try await Self.cancel(harness, ["--campaign", "early"])
        #expect(early.status == 0, "\(early.output)")
        #expect(early.output.hasPrefix("cancelled campaign:early: push.jobs.control["), "\(early.output)")
        let watcher = try await CancelWatcher.start(harness)
        let worker = try harness.startWorker()
        let before = Self.jobs(5, tokensPerJob: 10, prefix: "early", campaign: "early", firstJob: 0)
        let plain = Self.jobs(1, tokensPerJob: 10, prefix: "plain", campaign: "plain", firstJob: 100)
        var reports = try await harness.produce(before.values + plain.values, keys: before.keys + plain.keys)
        try await waitUntil("the first jobs done", timeout: .seconds(60), interval: .milliseconds(100)) { watcher.jobsDone >= 6 }

        // Lifted: jobs of the campaign that arrive from now on are sent.
        let undo = try await Self.cancel(harness, ["--campaign", "early", "--undo"])
        #expect(undo.status == 0 && undo.output.hasPrefix("lifted campaign:early"), "\(undo.output)")
        try await waitUntil("the worker saw the undo", timeout: .seconds(10), interval: .milliseconds(50)) {
            worker.log.contains("cancel lifted")
        }
        let after = Self.jobs(2, tokensPerJob: 10, prefix: "later", campaign: "early", firstJob: 200)
        reports += try await harness.produce(after.values, keys: after.keys)
        try await waitUntil("every job done", timeout: .seconds(60), interval: .milliseconds(100)) { watcher.jobsDone >= 8 }
        let state = watcher.snapshot
        worker.terminate()
        #expect(await worker.waitForExit(timeout: .seconds(40)) == 0, "worker log:\n\(worker.log.suffix(2000))")
        await watcher.stop()
        let (committed, offsets) = try await harness.everythingCommitted(reports)
        #expect(committed, "every job's offset committed: \(offsets)")
        await harness.stop()

        for (index, token) in before.tokens.enumerated() {
            #expect(state.finals["early-\(index / 10)/\(token)"] == ["0 cancelled"], "early token \(index)")
        }
        for (index, token) in plain.tokens.enumerated() {
            #expect(state.finals["plain-0/\(token)"] == ["200"], "plain token \(index)")
        }
        for (index, token) in after.tokens.enumerated() {
            #expect(state.finals["later-\(index / 10)/\(token)"] == ["200"], "later token \(index)")
        }
        for key in before.keys { #expect(state.jobDone[key] == ["0 cancelled": 10], "\(key)") }
        let arrivals = try Self.recorded(recording)
        #expect(before.tokens.allSatisfy { arrivals[$0] == nil }, "the mock saw no request of the cancelled jobs")
        #expect((plain.tokens + after.tokens).allSatisfy { arrivals[$0]?.count == 1 })
    }

    @Test func theCancelCommandRefusesBothOrNeitherTargetAndSaysWhenKafkaDoesNotAcknowledge() async throws {
        let directory = try ProjectPaths.temporaryDirectory("cancel-cli")
        let config = directory.appendingPathComponent("kafka.yaml").path
        // Nothing listens on port 1: the record is never acknowledged.
        try "kafka:\n  brokers: \"127.0.0.1:1\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let both = try await runPushline(["cancel", "--config", config, "--campaign", "a", "--job", "b"])
        #expect(both.status == 2)
        #expect(both.stderr.contains("--campaign and --job: give only one of them"), "\(both.stderr)")
        let neither = try await runPushline(["cancel", "--config", config])
        #expect(neither.status == 2)
        #expect(neither.stderr.contains("--campaign NAME or --job ID"), "\(neither.stderr)")
        let tooLong = try await runPushline(["cancel", "--config", config, "--job", String(repeating: "j", count: 129)])
        #expect(tooLong.status == 2 && tooLong.stderr.contains("1 to 128 bytes"), "\(tooLong.stderr)")
        let unreachable = try await runPushline(["cancel", "--config", config, "--campaign", "a", "--timeout", "2"])
        #expect(unreachable.status == 1)
        #expect(unreachable.stderr.contains("cancel: campaign:a not written to push.jobs.control"), "\(unreachable.stderr)")
        let help = try await runPushline(["cancel", "--help"])
        #expect(help.status == 0 && help.stdout.contains("--undo") && help.stdout.contains("kafka.control_topic"))
    }
}

/// Reads the results topic while a test runs: each token's final records (`"<status>"` or
/// `"<status> <reason>"`, by `<job>/<token>`) and each job's `job_done` counts.
final class CancelWatcher: Sendable {
    struct State: Sendable {
        var finals: [String: [String]] = [:]
        var finalsByPrefix: [String: Int] = [:]
        var jobDone: [String: [String: Int]] = [:]
    }

    private let reader: ResultsTopicReader
    private let state = Mutex(State())

    static func start(_ harness: Harness) async throws -> CancelWatcher {
        let watcher = CancelWatcher(reader: try ResultsTopicReader(harness, group: "cancel-watcher"))
        try await watcher.reader.start { [watcher] records in watcher.note(records) }
        return watcher
    }

    private init(reader: ResultsTopicReader) {
        self.reader = reader
    }

    private func note(_ records: [KafkaRecord]) {
        let objects = records.map(json)
        state.withLock { state in
            for object in objects {
                guard let job = object["job_id"] as? String else { continue }
                switch object["type"] as? String {
                case "delivery" where object["final"] as? Bool == true:
                    let status = object["status"] as? Int ?? -1
                    let outcome = (object["reason"] as? String).map { "\(status) \($0)" } ?? "\(status)"
                    state.finals["\(job)/\(object["token"] as? String ?? "")", default: []].append(outcome)
                    state.finalsByPrefix[String(job.prefix { $0 != "-" }), default: 0] += 1
                case "job_done":
                    state.jobDone[job] = object["counts"] as? [String: Int] ?? [:]
                default:
                    break
                }
            }
        }
    }

    /// Final delivery records read for jobs whose id starts with `prefix` ("spring-").
    func finals(prefix: String) -> Int {
        state.withLock { $0.finalsByPrefix[String(prefix.dropLast()), default: 0] }
    }

    var jobsDone: Int { state.withLock { $0.jobDone.count } }

    var snapshot: State { state.withLock { $0 } }

    func stop() async {
        await reader.stop()
    }
}
