import Foundation
import PushlineAPNSMock
import PushlineKafka
import PushlineTestSupport
import Synchronization
import Testing

/// Systemic APNs faults end to end: the mock refuses everything for a while and then heals; the
/// worker holds the app instead of finalizing the campaign, probes, and resumes.
@Suite(.serialized) struct SystemicHoldTests {
    static let outageSeconds = 20.0

    /// Final delivery records by token.
    static func byToken(_ records: [ReadRecord]) -> [String: [[String: Any]]] {
        var byToken: [String: [[String: Any]]] = [:]
        for delivery in WorkerEndToEndTests.deliveries(records) {
            byToken[delivery["token"] as? String ?? "", default: []].append(delivery)
        }
        return byToken
    }

    /// Polls `/readyz` in the background and keeps every answer that named a held app.
    struct ReadyzWatcher {
        private let task: Task<[String], Never>

        init(_ harness: Harness) {
            task = Task {
                var held: [String] = []
                while !Task.isCancelled {
                    if let (status, body) = try? await harness.scrape("/readyz"), status == 503, body.contains("held") {
                        held.append(body)
                    }
                    try? await Task.sleep(for: .milliseconds(250))
                }
                return held
            }
        }

        func heldAnswers() async -> [String] {
            task.cancel()
            return await task.value
        }
    }

    @Test(arguments: [
        (403, "InvalidProviderToken"),
        (503, "ServiceUnavailable"),
        (500, "InternalServerError"),
    ])
    func anOutageHoldsTheCampaignAndNothingIsBurned(status: Int, reason: String) async throws {
        let harness = try await Harness.start { configuration in
            configuration.unregisteredFraction = 0.02
            configuration.latencyMilliseconds = 1
            configuration.outageStatus = status
            configuration.outageReason = reason
            configuration.outageSeconds = Self.outageSeconds
        }
        let (values, keys, tokens) = WorkerEndToEndTests.jobs(1000, tokensPerJob: 4)
        let reports = try await harness.produce(values, keys: keys)
        let worker = try harness.startWorker()
        let readyz = ReadyzWatcher(harness)

        // While APNs refuses, no job of the campaign is committed: the backlog stays in Kafka.
        try await waitUntil("the outage to start", timeout: .seconds(60)) { harness.mock.stats.outageAnswers > 0 }
        try await waitUntil("the app to be held", timeout: .seconds(30)) {
            (try? await harness.scrape("/metrics"))?.1.contains(#"pushline_app_held{app="default"} 1"#) ?? false
        }
        let committedDuringOutage = try await harness.committedOffsets().values.compactMap { $0 }.reduce(0, +)

        let results = try await harness.read(Harness.resultsTopic, timeout: .seconds(180)) { records in
            Self.byToken(records).count >= tokens.count
        }
        let byToken = Self.byToken(results)
        #expect(byToken.count == tokens.count, "nothing is missing")
        #expect(byToken.values.allSatisfy { $0.count == 1 }, "one final record per token")
        let rule = UnregisteredRule(listed: [], fraction: 0.02)
        var refused = 0
        var wrong: [[String: Any]] = []
        for token in tokens {
            guard let record = byToken[token]?.first else { continue }
            let answer = record["status"] as? Int
            if answer == status {
                refused += 1
            } else if answer != (rule.unregisteredSince(token) == nil ? 200 : 410) {
                wrong.append(record)
            }
        }
        #expect(refused <= tokens.count / 100, "at most 1% final \(status): \(refused)")
        #expect(wrong.isEmpty, "\(wrong.prefix(3))")
        #expect(results.map(json).contains { $0["held_ms"] != nil }, "records say they were held")
        let held = await readyz.heldAnswers()
        #expect(!held.isEmpty, "/readyz named the held app during the outage")
        #expect(held.first?.contains("app default held") ?? false, "\(held.first ?? "")")

        worker.terminate()
        #expect(await worker.waitForExit(timeout: .seconds(40)) == 0, "worker log:\n\(worker.log.suffix(2000))")
        let (committedAll, offsets) = try await harness.everythingCommitted(reports)
        #expect(committedAll, "committed offsets: \(offsets)")
        // Jobs finished before the hold may be committed; the held backlog was not.
        #expect(committedDuringOutage < values.count / 2, "committed during the outage: \(committedDuringOutage)")
        let log = worker.log
        #expect(log.components(separatedBy: "holding its notifications").count - 1 >= 1)
        #expect(log.components(separatedBy: "hold ended").count - 1 >= 1)
        await harness.stop()
    }

    /// Two apps: "broken" on the harness's mock, which refuses everything with 403 for
    /// `outageSeconds`, and "ok" on a second, healthy mock (returned for the caller to stop).
    static func twoApps(outageSeconds: Double, urgentLane: Bool = false) async throws -> (Harness, MockFixture) {
        // A second mock, healthy, for the app "ok"; the harness's mock refuses everything.
        let healthy = try await MockFixture.start { $0.topics = [MockFixture.bundleID] }
        let directory = try ProjectPaths.temporaryDirectory("two-apps")
        let bothCAs = directory.appendingPathComponent("cas.pem").path
        let override = AppsOverride(
            apps: { refusing in
                [
                    "broken": AppsOverride.tokenApp(keyFrom: refusing),
                    "ok": AppsOverride.tokenApp(keyFrom: healthy, ["endpoint": healthy.endpoint]),
                ]
            },
            caFile: { refusing in
                let pems = [refusing.caFile, healthy.caFile].compactMap { try? String(contentsOfFile: $0, encoding: .utf8) }
                try? pems.joined(separator: "\n").write(toFile: bothCAs, atomically: true, encoding: .utf8)
                return bothCAs
            }
        )
        let harness = try await Harness.start(apps: override, urgentLane: urgentLane) { configuration in
            configuration.outageStatus = 403
            configuration.outageReason = "InvalidProviderToken"
            configuration.outageSeconds = outageSeconds
        }
        return (harness, healthy)
    }

    /// 400 jobs of two tokens, alternately for "broken" and "ok".
    static func twoAppJobs() -> (values: [[UInt8]], keys: [String]) {
        var values: [[UInt8]] = []
        var keys: [String] = []
        for job in 0..<400 {
            let app = job % 2 == 0 ? "broken" : "ok"
            let list = (0..<2).map { "\"\(deviceToken(job: job, index: $0))\"" }.joined(separator: ",")
            values.append(Array(#"{"id":"\#(app)-\#(job)","app":"\#(app)","tokens":[\#(list)],"payload":{"aps":{}}}"#.utf8))
            keys.append("\(app)-\(job)")
        }
        return (values, keys)
    }

    @Test func aWrongTopicInOneJobIsFinalAndTheAppIsNotHeld() async throws {
        let harness = try await Harness.start { $0.latencyMilliseconds = 1 }
        let generated = WorkerEndToEndTests.jobs(500, tokensPerJob: 4)
        var values = generated.values
        let (keys, tokens) = (generated.keys, generated.tokens)
        let wrong = (0..<4).map { deviceToken(job: 250, index: $0) }
        let list = wrong.map { "\"\($0)\"" }.joined(separator: ",")
        values[250] = Array(#"{"id":"job-250","topic":"com.example.someone-else","tokens":[\#(list)],"payload":{"aps":{}}}"#.utf8)
        _ = try await harness.produce(values, keys: keys)
        let worker = try harness.startWorker()
        let results = try await harness.read(Harness.resultsTopic) { Self.byToken($0).count >= tokens.count }
        let byToken = Self.byToken(results)
        for token in tokens {
            let record = byToken[token]?.first
            if wrong.contains(token) {
                #expect(record?["status"] as? Int == 400 && record?["reason"] as? String == "TopicDisallowed", "\(record ?? [:])")
                #expect(record?["held_ms"] == nil)
            } else {
                #expect(record?["status"] as? Int == 200, "\(record ?? [:])")
            }
        }
        #expect(byToken.values.allSatisfy { $0.count == 1 })
        worker.terminate()
        _ = await worker.waitForExit(timeout: .seconds(40))
        #expect(!worker.log.contains("holding its notifications"), "the app was never held")
        await harness.stop()
    }
}
