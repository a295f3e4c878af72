import Foundation
import PushlineAPNSMock
import PushlineKafka
import PushlineTestSupport
import Testing

/// Results for campaign senders end to end (issue 30): a `job_done` per job that agrees with the
/// deliveries (full mode) and with the mock's own answers (compact mode), the sender's `meta` byte
/// for byte in every record type, and a kill between a job's last delivery and its commit.
@Suite(.serialized) struct JobDoneEndToEndTests {
    /// A job to `tokens`, with `meta` (as written) when given.
    static func job(_ id: String, tokens: [String], meta: String?) -> [UInt8] {
        let list = tokens.map { "\"\($0)\"" }.joined(separator: ",")
        let member = meta.map { #","meta":\#($0)"# } ?? ""
        return Array(#"{"id":"\#(id)","tokens":[\#(list)]\#(member),"payload":{"aps":{"alert":"sale"}}}"#.utf8)
    }

    static func records(_ records: [ReadRecord], type: String) -> [[String: Any]] {
        records.map(json).filter { $0["type"] as? String == type }
    }

    /// A delivery's status and reason as `job_done`'s `counts` names them.
    static func outcome(_ delivery: [String: Any]) -> String {
        let status = delivery["status"] as? Int ?? -1
        return (delivery["reason"] as? String).map { "\(status) \($0)" } ?? String(status)
    }

    /// Whether `value` ends with `,"meta":<meta>}`, the meta bytes exactly as the job gave them.
    static func endsWithMeta(_ value: [UInt8], _ meta: String) -> Bool {
        let suffix = Array(#","meta":\#(meta)}"#.utf8)
        return value.count > suffix.count && Array(value.suffix(suffix.count)) == suffix
    }

    /// Jobs of 20 tokens, and single-token jobs (which the pipeline runs in groups of up to 64,
    /// one progress object each: their records must be the same).
    @Test(arguments: zip([60, 1200], [20, 1]))
    func fullModeJobDoneCountsEqualTheDeliveriesAndMetaIsInEveryRecord(jobs: Int, perJob: Int) async throws {
        let harness = try await Harness.start { $0.unregisteredFraction = 0.05 }
        var values: [[UInt8]] = []
        var keys: [String] = []
        var metaByJob: [String: String] = [:]
        for job in 0..<jobs {
            let id = "full-\(job)"
            // Spacing, an escaped slash and a number's spelling: kept as written.
            let meta: String? = job % 2 == 0 ? #"{ "campaign":"c\/42", "job":\#(job), "n":1.50 }"# : nil
            metaByJob[id] = meta
            values.append(Self.job(id, tokens: (0..<perJob).map { deviceToken(job: job, index: $0) }, meta: meta))
            keys.append(id)
        }
        // A broadcast to a channel that was never made: a 400 delivery, a channel_gone and a job_done.
        let broadcastMeta = #"{"campaign":"live","u":"\u00e9"}"#
        metaByJob["full-la"] = broadcastMeta
        values.append(Array(#"{"id":"full-la","channel_id":"AAAA","meta":\#(broadcastMeta),"payload":{"aps":{"event":"end"}}}"#.utf8))
        keys.append("full-la")
        // Rejected after its meta was read: the rejected record carries it.
        let rejectedMeta = #"{"campaign":"bad"}"#
        metaByJob["full-bad"] = rejectedMeta
        values.append(
            Array(#"{"id":"full-bad","token":"\#(deviceToken(job: 0, index: 0))","app":"nope","meta":\#(rejectedMeta),"payload":{}}"#.utf8)
        )
        keys.append("full-bad")
        _ = try await harness.produce(values, keys: keys)
        let worker = try harness.startWorker()

        let tokens = jobs * perJob
        let results = try await harness.read(Harness.resultsTopic) { records in
            let deliveries = Self.records(records, type: "delivery")
            return Self.records(records, type: "job_done").count >= jobs + 1 && deliveries.count >= tokens + 1
                && Self.records(records, type: "rejected").count >= 1 && Self.records(records, type: "channel_gone").count >= 1
                && Self.records(records, type: "token_invalidated").count >= deliveries.filter { $0["status"] as? Int == 410 }.count
        }
        let deliveries = Self.records(results, type: "delivery")
        let done = Self.records(results, type: "job_done")
        #expect(done.count == jobs + 1, "one job_done per job, none for the rejected one")
        let deliveriesByJob = Dictionary(grouping: deliveries) { $0["job_id"] as? String ?? "" }
        let dead = deliveries.filter { $0["status"] as? Int == 410 }.count
        #expect(dead > 20, "about 5% of \(tokens) tokens are unregistered")
        for summary in done {
            let id = summary["job_id"] as? String ?? ""
            let own = deliveriesByJob[id, default: []]
            var expected: [String: Int] = [:]
            for delivery in own { expected[Self.outcome(delivery), default: 0] += 1 }
            #expect(summary["counts"] as? [String: Int] == expected, "\(id): \(summary)")
            #expect(summary["attempts"] as? Int == own.reduce(0) { $0 + ($1["attempts"] as? Int ?? 0) })
            let latency = summary["latency_ms"] as? [String: Double]
            #expect(latency?["max"] == own.compactMap { $0["latency_ms"] as? Double }.max(), "\(id)")
            let firstSent = (summary["first_sent"] as? NSNumber)?.int64Value ?? 0
            let lastAnswer = (summary["last_answer"] as? NSNumber)?.int64Value ?? 0
            #expect(firstSent > 1_700_000_000_000 && firstSent <= lastAnswer, "\(summary)")
            if id == "full-la" {
                #expect(summary["channel_id"] as? String == "AAAA")
                #expect(summary["counts"] as? [String: Int] == ["400 ChannelNotRegistered": 1])
            } else {
                #expect(summary["tokens"] as? Int == perJob)
                #expect(own.count == perJob)
            }
        }
        let summaryKeys = results.filter { json($0)["type"] as? String == "job_done" }.map { String(decoding: $0.key ?? [], as: UTF8.self) }
        #expect(Set(summaryKeys) == Set(done.compactMap { $0["job_id"] as? String }), "job_done is keyed by job id")
        // The producer's partitioner places records by key: a job's job_done lands in the
        // partition of its deliveries, after every one of them.
        var placed: [String: (deliveries: [(partition: Int32, offset: Int64)], done: (partition: Int32, offset: Int64)?)] = [:]
        for record in results {
            let object = json(record)
            guard let id = object["job_id"] as? String else { continue }
            switch object["type"] as? String {
            case "delivery": placed[id, default: ([], nil)].deliveries.append((record.partition, record.offset))
            case "job_done": placed[id, default: ([], nil)].done = (record.partition, record.offset)
            default: break
            }
        }
        for (id, job) in placed {
            let summary = try #require(job.done, "\(id) has a job_done")
            #expect(job.deliveries.allSatisfy { $0.partition == summary.partition && $0.offset < summary.offset }, "\(id): \(job)")
        }

        // meta, byte for byte, in every record of a job that has one; no meta member otherwise.
        var typesWithMeta: Set<String> = []
        for record in results {
            let object = json(record)
            let type = object["type"] as? String ?? ""
            let id = object["job_id"] as? String ?? ""
            if let meta = metaByJob[id] {
                #expect(Self.endsWithMeta(record.value, meta), "\(String(decoding: record.value, as: UTF8.self))")
                typesWithMeta.insert(type)
            } else {
                #expect(object["meta"] == nil, "\(object)")
            }
        }
        #expect(typesWithMeta == ["delivery", "token_invalidated", "channel_gone", "job_done", "rejected"])

        try await RecordContract.validate(results, required: ["delivery", "token_invalidated", "channel_gone", "job_done", "rejected"])
        worker.terminate()
        #expect(await worker.waitForExit(timeout: .seconds(40)) == 0)
        await harness.stop()
    }

    @Test func compactModePublishesFailuresInvalidationsAndSummariesOnly() async throws {
        // One job whose every token is unregistered, beside jobs with 3% unregistered tokens.
        let allDead = (0..<30).map { deviceToken(job: 999, index: $0) }
        let harness = try await Harness.start(results: "compact") { configuration in
            configuration.unregisteredFraction = 0.03
            configuration.unregisteredTokens = Set(allDead)
        }
        let jobs = 40
        let perJob = 100
        var values: [[UInt8]] = []
        var keys: [String] = []
        let meta = #"{"campaign":"c42","variant":"B"}"#
        for job in 0..<jobs {
            values.append(Self.job("compact-\(job)", tokens: (0..<perJob).map { deviceToken(job: job, index: $0) }, meta: meta))
            keys.append("compact-\(job)")
        }
        values.append(Self.job("compact-dead", tokens: allDead, meta: meta))
        keys.append("compact-dead")
        _ = try await harness.produce(values, keys: keys)
        let worker = try harness.startWorker()

        let results = try await harness.read(Harness.resultsTopic) { records in
            let done = Self.records(records, type: "job_done")
            let dead = done.reduce(0) { $0 + (($1["counts"] as? [String: Int])?["410 Unregistered"] ?? 0) }
            return done.count >= jobs + 1 && Self.records(records, type: "token_invalidated").count >= dead
                && Self.records(records, type: "delivery").count >= dead
        }
        let deliveries = Self.records(results, type: "delivery")
        let done = Self.records(results, type: "job_done")
        #expect(done.count == jobs + 1)
        #expect(!deliveries.contains { (200...299).contains($0["status"] as? Int ?? 0) }, "no 2xx delivery in compact mode")

        // The summaries against the mock's own count of its answers (no retries here: one each).
        var summed: [String: Int] = [:]
        for summary in done {
            for (outcome, count) in summary["counts"] as? [String: Int] ?? [:] { summed[outcome, default: 0] += count }
        }
        let stats = harness.mock.stats
        #expect(summed["200"] == stats.byStatus[200], "\(summed) against \(stats.byStatus)")
        #expect(summed["410 Unregistered"] == stats.byStatus[410])
        #expect(summed["410 Unregistered"] == stats.byReason["Unregistered"])
        #expect(summed.values.reduce(0, +) == jobs * perJob + allDead.count)
        #expect(summed.keys.sorted() == ["200", "410 Unregistered"])

        // Each job: its 410 deliveries are its summary's, and its records on the results topic are
        // one delivery and one token_invalidated per dead token and one job_done.
        let byJob = Dictionary(grouping: results.map(json)) { $0["job_id"] as? String ?? "" }
        var perHundred: [Int] = []
        for summary in done {
            let id = summary["job_id"] as? String ?? ""
            let own = byJob[id, default: []]
            let deadHere = (summary["counts"] as? [String: Int])?["410 Unregistered"] ?? 0
            #expect(own.filter { $0["type"] as? String == "delivery" }.count == deadHere, "\(id)")
            #expect(own.filter { $0["type"] as? String == "token_invalidated" }.count == deadHere, "\(id)")
            #expect(own.count == 2 * deadHere + 1, "\(id): \(own.count) records")
            if summary["tokens"] as? Int == perJob { perHundred.append(own.count) }
        }
        let average = Double(perHundred.reduce(0, +)) / Double(max(perHundred.count, 1))
        print("compact mode: \(String(format: "%.2f", average)) results-topic records per 100-token job at 3% unregistered")
        #expect(perHundred.count == jobs)

        // The all-410 job: its invalidations and its job_done, with meta in each.
        let deadJob = byJob["compact-dead", default: []]
        #expect(deadJob.filter { $0["type"] as? String == "token_invalidated" }.count == allDead.count)
        #expect(
            deadJob.filter { $0["type"] as? String == "job_done" }.first?["counts"] as? [String: Int] == ["410 Unregistered": allDead.count]
        )
        let metaTypes = Set(results.filter { Self.endsWithMeta($0.value, meta) }.compactMap { json($0)["type"] as? String })
        #expect(metaTypes == ["delivery", "token_invalidated", "job_done"])
        #expect(results.allSatisfy { Self.endsWithMeta($0.value, meta) })

        try await RecordContract.validate(results, required: ["delivery", "token_invalidated", "job_done"])
        worker.terminate()
        #expect(await worker.waitForExit(timeout: .seconds(40)) == 0)
        await harness.stop()
    }

    @Test func aWorkerKilledBeforeTheCommitPublishesTheJobAgainNeverLess() async throws {
        // 429s (retried after up to a second) make jobs finish out of offset order: many are done,
        // their job_done published, while an earlier job of their partition holds the commit back.
        let harness = try await Harness.start { configuration in
            configuration.latencyMilliseconds = 2
            configuration.rate429 = 0.1
        }
        let (values, keys, tokens) = WorkerEndToEndTests.jobs(1000, tokensPerJob: 10, prefix: "kill")
        let reports = try await harness.produce(values, keys: keys)
        let first = try harness.startWorker()
        let before = try await harness.read(Harness.resultsTopic) { Self.records($0, type: "job_done").count >= 100 }
        first.kill9()
        _ = await first.waitForExit(timeout: .seconds(10))
        let doneBefore = Set(Self.records(before, type: "job_done").compactMap { $0["job_id"] as? String })

        // Jobs whose job_done was out but whose offset was not committed: the restart must publish
        // them again, every record of them.
        let committed = try await harness.committedOffsets()
        var again: Set<String> = []
        for (index, report) in reports.enumerated()
        where doneBefore.contains(keys[index]) && report.offset >= ((committed[report.partition] ?? nil) ?? 0) {
            again.insert(keys[index])
        }
        print("kill -9 after \(doneBefore.count) job_done records read: \(again.count) of those jobs were not committed")
        #expect(!again.isEmpty, "the kill came between some job's last record and its commit")

        let second = try harness.startWorker()
        let wanted = again
        let results = try await harness.read(Harness.resultsTopic, timeout: .seconds(180)) { records in
            let done = Dictionary(grouping: Self.records(records, type: "job_done")) { $0["job_id"] as? String ?? "" }
            return done.count >= keys.count && wanted.allSatisfy { done[$0, default: []].count >= 2 }
        }
        let done = Dictionary(grouping: Self.records(results, type: "job_done")) { $0["job_id"] as? String ?? "" }
        let deliveries = Self.records(results, type: "delivery")
        let perToken = Dictionary(grouping: deliveries) { $0["token"] as? String ?? "" }.mapValues(\.count)
        #expect(Set(perToken.keys) == Set(tokens), "every token has its delivery")
        #expect(Set(done.keys) == Set(keys), "every job has its job_done")
        for job in again {
            #expect(done[job, default: []].count >= 2, "\(job) was not published again")
            let index = Int(job.split(separator: "-").last ?? "") ?? -1
            for token in (0..<10).map({ deviceToken(job: index, index: $0) }) {
                #expect(perToken[token, default: 0] >= 2, "\(job): \(token) has \(perToken[token, default: 0]) deliveries")
            }
        }
        // Each summary agrees with its job: ten tokens, whichever run published it.
        for summary in done.values.joined() {
            #expect((summary["counts"] as? [String: Int])?.values.reduce(0, +) == 10, "\(summary)")
        }
        second.terminate()
        #expect(await second.waitForExit(timeout: .seconds(40)) == 0)
        await harness.stop()
    }
}
