import Foundation
import PushlineAPNSMock
import PushlineKafka
import PushlineTestSupport
import Testing

/// The worker end to end: the embedded broker, `pushline mock-apns` over TLS, and the `pushline`
/// binary, checked through the records on the result topics.
@Suite(.serialized) struct WorkerEndToEndTests {
    /// `jobs` jobs of `tokensPerJob` tokens each, as NDJSON values and keys.
    static func jobs(_ jobs: Int, tokensPerJob: Int, prefix: String = "job") -> (values: [[UInt8]], keys: [String], tokens: [String]) {
        var values: [[UInt8]] = []
        var keys: [String] = []
        var tokens: [String] = []
        for job in 0..<jobs {
            let jobTokens = (0..<tokensPerJob).map { deviceToken(job: job, index: $0) }
            tokens += jobTokens
            let id = "\(prefix)-\(job)"
            let list = jobTokens.map { "\"\($0)\"" }.joined(separator: ",")
            values.append(Array(#"{"id":"\#(id)","tokens":[\#(list)],"payload":{"aps":{"alert":"sale \/ 50%"},"n":1.50}}"#.utf8))
            keys.append(id)
        }
        return (values, keys, tokens)
    }

    static func deliveries(_ records: [ReadRecord]) -> [[String: Any]] {
        records.map(json).filter { $0["type"] as? String == "delivery" }
    }

    @Test func everyTokenGetsOneFinalRecordAndDeadTokensAreInvalidated() async throws {
        let harness = try await Harness.start { $0.unregisteredFraction = 0.05 }
        let (values, keys, tokens) = Self.jobs(2000, tokensPerJob: 10)
        let reports = try await harness.produce(values, keys: keys)
        let worker = try harness.startWorker()

        // /readyz: not ready until the group is joined and an APNs connection is up, then ready.
        var sawNotReady = false
        try await waitUntil("/readyz ready", timeout: .seconds(60), interval: .milliseconds(50)) {
            guard let (status, _) = try? await harness.scrape("/readyz") else { return false }
            if status == 503 { sawNotReady = true }
            return status == 200
        }
        #expect(sawNotReady, "readiness waited for the group join")

        let results = try await harness.read(Harness.resultsTopic) { records in
            Self.deliveries(records).count >= tokens.count
        }
        let deliveries = Self.deliveries(results)
        let rule = UnregisteredRule(listed: [], fraction: 0.05)
        var expectedDead: [String: Int64] = [:]
        for token in tokens {
            if let since = rule.unregisteredSince(token) { expectedDead[token] = since }
        }
        #expect(expectedDead.count > 500 && expectedDead.count < 1500)

        // Exactly one final delivery record per token.
        var byToken: [String: [[String: Any]]] = [:]
        for delivery in deliveries { byToken[delivery["token"] as? String ?? "", default: []].append(delivery) }
        #expect(byToken.count == tokens.count)
        #expect(byToken.values.allSatisfy { $0.count == 1 }, "duplicates: \(byToken.values.filter { $0.count > 1 }.count)")
        for (token, records) in byToken {
            let record = records[0]
            #expect(record["final"] as? Bool == true)
            #expect(record["apns_unique_id"] is NSNull, "the mock sends no apns-unique-id unless asked")
            if let since = expectedDead[token] {
                #expect(record["status"] as? Int == 410)
                #expect(record["reason"] as? String == "Unregistered")
                #expect((record["timestamp"] as? NSNumber)?.int64Value == since)
            } else {
                #expect(record["status"] as? Int == 200, "\(record)")
            }
        }

        // A token_invalidated record for exactly the unregistered tokens, with the mock's timestamps,
        // on the results topic and on the invalidations topic.
        let invalidations = results.map(json).filter { $0["type"] as? String == "token_invalidated" }
        var invalidated: [String: Int64] = [:]
        for record in invalidations {
            invalidated[record["token"] as? String ?? ""] = (record["invalid_since"] as? NSNumber)?.int64Value
        }
        #expect(invalidations.count == expectedDead.count)
        #expect(invalidated == expectedDead)
        // Apple's reason verbatim, and the environment that said so (the mock is a HOST:PORT endpoint).
        #expect(invalidations.allSatisfy { $0["reason"] as? String == "Unregistered" && $0["environment"] as? String == "custom" })
        let deadCount = expectedDead.count
        let separate = try await harness.read(Harness.invalidationsTopic) { $0.count >= deadCount }
        #expect(Set(separate.map { String(decoding: $0.key ?? [], as: UTF8.self) }) == Set(expectedDead.keys))

        // /metrics agrees with the records.
        let (_, metrics) = try await harness.scrape("/metrics")
        #expect(metrics.contains(#"pushline_notifications_total{app="default",status="410",reason="Unregistered"} \#(expectedDead.count)"#))
        #expect(
            metrics.contains(#"pushline_notifications_total{app="default",status="200",reason=""} \#(tokens.count - expectedDead.count)"#)
        )
        // Every answer once in the client's metrics too (a read batch's are counted in place, then
        // recorded), and every token's latencies.
        #expect(
            metrics.contains(#"pushline_apns_responses_total{app="default",status="410",reason="Unregistered"} \#(expectedDead.count)"#)
        )
        #expect(
            metrics.contains(#"pushline_apns_responses_total{app="default",status="200",reason=""} \#(tokens.count - expectedDead.count)"#)
        )
        #expect(metrics.contains(#"pushline_apns_latency_seconds_count{app="default"} \#(tokens.count)"#))
        #expect(metrics.contains(#"pushline_end_to_end_latency_seconds_count{app="default"} \#(tokens.count)"#))
        // jemalloc's account of the heap, sampled every 250 ms: something allocated, and no more
        // than the allocator holds in RAM.
        func gauge(_ name: String) -> Double? {
            metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
        }
        let allocated = try #require(gauge("pushline_heap_allocated_bytes"), "\(metrics)")
        let resident = try #require(gauge("pushline_heap_resident_bytes"))
        #expect(allocated > 1_000_000 && allocated <= resident, "allocated \(allocated), resident \(resident)")

        // SIGTERM: exits 0, and every offset was committed at the end of every partition.
        worker.terminate()
        let status = await worker.waitForExit(timeout: .seconds(40))
        #expect(status == 0, "worker log:\n\(worker.log.suffix(2000))")
        let (committedAll, offsets) = try await harness.everythingCommitted(reports)
        #expect(committedAll, "committed offsets: \(offsets)")
        // A polite close: every APNs connection said GOAWAY before it closed (the mock closed none
        // of them itself here).
        try await waitUntil("the mock sees every connection closed") { harness.mock.stats.openConnections == 0 }
        let mockStats = harness.mock.stats
        #expect(mockStats.connections > 0)
        #expect(
            mockStats.goawaysReceived == mockStats.connections,
            "\(mockStats.goawaysReceived) GOAWAYs, \(mockStats.connections) connections"
        )

        // No secret reaches the log: not the signing key, not the JWT signature.
        let log = worker.log
        let keyPEM = try String(contentsOfFile: harness.mock.keyFile, encoding: .utf8)
        let keyBody = keyPEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        #expect(!log.contains(keyBody))
        #expect(!log.contains("bearer "))
        #expect(!log.contains(tokens[0]), "device tokens are shortened in logs")
        await harness.stop()
    }

    @Test func aKilledWorkerLosesNothing() async throws {
        let harness = try await Harness.start { $0.latencyMilliseconds = 2 }
        let (values, keys, tokens) = Self.jobs(2000, tokensPerJob: 10)
        _ = try await harness.produce(values, keys: keys)
        let first = try harness.startWorker()
        _ = try await harness.read(Harness.resultsTopic) { Self.deliveries($0).count >= 4000 }
        first.kill9()
        _ = await first.waitForExit(timeout: .seconds(10))

        let second = try harness.startWorker()
        let results = try await harness.read(Harness.resultsTopic, timeout: .seconds(180)) { records in
            Set(Self.deliveries(records).compactMap { $0["token"] as? String }).count >= tokens.count
        }
        let delivered = Set(Self.deliveries(results).filter { $0["final"] as? Bool == true }.compactMap { $0["token"] as? String })
        #expect(delivered == Set(tokens), "missing \(Set(tokens).subtracting(delivered).count) tokens")
        let duplicates = Self.deliveries(results).count - delivered.count
        print("kill -9 mid-run: \(tokens.count) tokens, \(duplicates) duplicate deliveries re-sent after the restart")
        second.terminate()
        #expect(await second.waitForExit(timeout: .seconds(40)) == 0)
        await harness.stop()
    }

    @Test func serverErrorsAndGoawaysStillEndEveryToken() async throws {
        let harness = try await Harness.start { configuration in
            configuration.rate503 = 0.2
            configuration.goawayEvery = 500
        }
        let (values, keys, tokens) = Self.jobs(500, tokensPerJob: 10)
        _ = try await harness.produce(values, keys: keys)
        let worker = try harness.startWorker()
        let results = try await harness.read(Harness.resultsTopic) { Self.deliveries($0).count >= tokens.count }
        let deliveries = Self.deliveries(results)
        let byToken = Dictionary(grouping: deliveries) { $0["token"] as? String ?? "" }
        #expect(Set(byToken.keys) == Set(tokens))
        #expect(byToken.values.allSatisfy { $0.count == 1 })
        let retried = deliveries.filter { ($0["attempts"] as? Int ?? 0) > 1 }.count
        #expect(retried > 500, "about 20% of tokens needed a retry; saw \(retried)")
        let stillFailing = deliveries.filter { $0["status"] as? Int == 503 }
        #expect(stillFailing.allSatisfy { $0["attempts"] as? Int == 5 && $0["final"] as? Bool == true })
        #expect(harness.mock.stats.goawaysSent >= 5)
        worker.terminate()
        #expect(await worker.waitForExit(timeout: .seconds(40)) == 0)
        await harness.stop()
    }

    @Test func badJobsAreRejectedAndDeadLetteredWhileGoodOnesFlow() async throws {
        let harness = try await Harness.start()
        let token = deviceToken(job: 1, index: 1)
        let bigPayload = #"{"id":"big","token":"\#(token)","payload":{"a":""# + String(repeating: "x", count: 5000) + "\"}}"
        var random = SystemRandomNumberGenerator()
        let bad: [(String, [UInt8], String)] = [
            ("not-json", Array("this is not json".utf8), "invalid_json"),
            ("array", Array("[1,2,3]".utf8), "not_an_object"),
            ("no-id", Array(#"{"token":"\#(token)","payload":{}}"#.utf8), "missing_field"),
            ("no-token", Array(#"{"id":"no-token","payload":{}}"#.utf8), "missing_field"),
            ("non-hex", Array(#"{"id":"non-hex","token":"xyz!","payload":{}}"#.utf8), "invalid_field"),
            ("payload-string", Array(#"{"id":"payload-string","token":"\#(token)","payload":"hi"}"#.utf8), "invalid_field"),
            ("payload-big", Array(bigPayload.utf8), "payload_too_large"),
            ("unknown-app", Array(#"{"id":"unknown-app","token":"\#(token)","app":"nope","payload":{}}"#.utf8), "unknown_app"),
            (
                "one-mb",
                Array(#"{"id":"one-mb","token":"\#(token)","payload":{"a":""#.utf8) + [UInt8](repeating: 0x78, count: 1_048_576)
                    + Array("\"}}".utf8), "record_too_large"
            ),
            ("random", (0..<300).map { _ in UInt8.random(in: 0...255, using: &random) }, "invalid_json"),
            // The sender's meta: larger than 1 KiB, not an object, given twice.
            (
                "meta-1025",
                Array(#"{"id":"meta-1025","token":"\#(token)","meta":{"m":""#.utf8) + [UInt8](repeating: 0x78, count: 1017)
                    + Array(#""},"payload":{}}"#.utf8), "invalid_field: meta: 1025 bytes, at most 1024"
            ),
            (
                "meta-array", Array(#"{"id":"meta-array","token":"\#(token)","meta":[1,2],"payload":{}}"#.utf8),
                "invalid_field: meta: not a JSON object"
            ),
            (
                "meta-twice", Array(#"{"id":"meta-twice","token":"\#(token)","meta":{},"meta":{},"payload":{}}"#.utf8),
                "duplicate_field: meta"
            ),
        ]
        let (goodValues, goodKeys, goodTokens) = Self.jobs(50, tokensPerJob: 2, prefix: "good")
        var values: [[UInt8]] = []
        var keys: [String?] = []
        for (index, value) in goodValues.enumerated() {
            values.append(value)
            keys.append(goodKeys[index])
            if index < bad.count {
                values.append(bad[index].1)
                keys.append("bad-\(bad[index].0)")
            }
        }
        // Every record carries a header of the sender's: the dead-letter copy keeps it (the worker
        // reads valid jobs in librdkafka's buffer and copies only the records it rejects).
        _ = try await harness.produce(values, keys: keys) { index in
            [KafkaHeader(key: "sender-trace", value: Array("trace-\(keys[index] ?? "-")".utf8))]
        }
        let worker = try harness.startWorker()

        let results = try await harness.read(Harness.resultsTopic) { records in
            let parsed = records.map(json)
            return parsed.filter { $0["type"] as? String == "delivery" }.count >= goodTokens.count
                && parsed.filter { $0["type"] as? String == "rejected" }.count >= bad.count
        }
        let parsed = results.map(json)
        let rejected = parsed.filter { $0["type"] as? String == "rejected" }
        #expect(rejected.count == bad.count)
        let codes = rejected.compactMap { ($0["error"] as? String)?.split(separator: ":").first.map(String.init) }.sorted()
        #expect(codes == bad.map { String($0.2.prefix { $0 != ":" }) }.sorted())
        // Where the whole error is given, the rejected record says exactly that, with the job's id
        // (none for a duplicate: members are checked for repeats before any is read).
        for (name, _, error) in bad where error.contains(":") {
            let id: String? = error.hasPrefix("duplicate_field") ? nil : name
            #expect(rejected.contains { $0["error"] as? String == error && $0["job_id"] as? String == id }, "\(name)")
        }
        #expect(rejected.allSatisfy { ($0["source"] as? [String: Any])?["topic"] as? String == Harness.jobsTopic })
        let delivered = Set(
            parsed.filter { $0["type"] as? String == "delivery" && $0["status"] as? Int == 200 }.compactMap { $0["token"] as? String }
        )
        #expect(delivered == Set(goodTokens))

        let dead = try await harness.read(Harness.deadLetterTopic) { $0.count >= bad.count }
        #expect(dead.count == bad.count)
        for record in dead {
            let key = String(decoding: record.key ?? [], as: UTF8.self)
            guard let original = bad.first(where: { "bad-\($0.0)" == key }) else {
                Issue.record("unexpected dead-letter key \(key)")
                continue
            }
            let error = record.headers.first { $0.key == "pushline-error" }?.value.map { String(decoding: $0, as: UTF8.self) }
            #expect(error?.hasPrefix(original.2) == true, "\(key): \(error ?? "no header")")
            #expect(record.headers.first?.key == "sender-trace", "\(key): the sender's headers come first")
            #expect(record.headers.first?.value == Array("trace-\(key)".utf8), "\(key)")
            let truncated = record.headers.contains { $0.key == "pushline-truncated" }
            if truncated {
                #expect(Array(original.1.prefix(record.value.count)) == record.value, "\(key): truncated copy is a prefix")
            } else {
                #expect(record.value == original.1, "\(key): the dead-letter copy is byte-for-byte")
            }
        }
        worker.terminate()
        #expect(await worker.waitForExit(timeout: .seconds(40)) == 0)
        await harness.stop()
    }

    @Test func sigtermMidRunExitsCleanlyAndCommitsOnlyFinishedWork() async throws {
        let harness = try await Harness.start(maxInflight: 200, shutdownTimeoutMilliseconds: 3000) { configuration in
            configuration.latencyMilliseconds = 100
        }
        let (values, keys, _) = Self.jobs(600, tokensPerJob: 5)
        let reports = try await harness.produce(values, keys: keys)
        let worker = try harness.startWorker()
        _ = try await harness.read(Harness.resultsTopic) { Self.deliveries($0).count >= 300 }
        let stopAsked = ContinuousClock.now
        worker.terminate()
        let status = await worker.waitForExit(timeout: .seconds(20))
        #expect(status == 0, "log:\n\(worker.log.suffix(3000))")
        #expect(ContinuousClock.now - stopAsked < .seconds(15))

        // Which jobs did the group commit? Those below the committed offset of their partition.
        let committed = try await harness.committedOffsets()
        var committedJobIDs: Set<String> = []
        for (index, report) in reports.enumerated() where report.offset < ((committed[report.partition] ?? nil) ?? 0) {
            committedJobIDs.insert(keys[index])
        }
        let committedJobs = committedJobIDs.count
        // Every committed job must have all five results on the topic.
        let wanted = committedJobIDs
        let results = try await harness.read(Harness.resultsTopic, timeout: .seconds(60)) { records in
            let perJob = Dictionary(grouping: Self.deliveries(records)) { $0["job_id"] as? String ?? "" }
            return wanted.allSatisfy { perJob[$0, default: []].count >= 5 }
        }
        let deliveredPerJob = Dictionary(grouping: Self.deliveries(results)) { $0["job_id"] as? String ?? "" }.mapValues(\.count)
        for job in committedJobIDs {
            #expect(deliveredPerJob[job, default: 0] >= 5, "job \(job) committed without all its results")
        }
        #expect(committedJobs > 0)
        #expect(committedJobs < values.count, "the stop came mid-run")
        await harness.stop()
    }
}
