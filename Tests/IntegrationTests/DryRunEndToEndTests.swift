import Foundation
import PushlineTestSupport
import Testing

/// Dry runs end to end (issue 53): jobs with `"dry_run": true`, and a worker with
/// `worker.dry_run: true`, through the real broker and worker to the mock APNs, whose statistics
/// and recording show what reached it. A dry-run campaign sends nothing; every token has its
/// `status 0, reason "dry_run"` delivery, every job its `job_done`, and every offset is committed;
/// a normal job in the same run is sent, and a dry job past its deadline says `expired`.
@Suite(.serialized, .timeLimit(.minutes(3))) struct DryRunEndToEndTests {
    /// One job record: dry (`dry`: `"dry_run": true`) or normal, to `tokens` or to a channel.
    static func job(_ id: String, tokens: [String], dry: Bool, extra: String = "") -> [UInt8] {
        let list = tokens.map { "\"\($0)\"" }.joined(separator: ",")
        let field = dry ? #","dry_run":true"# : ""
        return Array(#"{"id":"\#(id)","tokens":[\#(list)]\#(field)\#(extra),"payload":{"aps":{"alert":"rehearsal"}}}"#.utf8)
    }

    static func records(_ records: [ReadRecord], type: String) -> [[String: Any]] {
        records.map(json).filter { $0["type"] as? String == type }
    }

    /// The jobs of a campaign: `jobs` jobs of `perJob` tokens, `singles` single-token jobs (which
    /// a normal run sends in groups) and a broadcast, each with its expected token count.
    static func campaign(prefix: String, jobs: Int, perJob: Int, singles: Int, dry: Bool) -> [(id: String, value: [UInt8], count: Int)] {
        var made: [(id: String, value: [UInt8], count: Int)] = []
        for job in 0..<jobs {
            let id = "\(prefix)-\(job)"
            made.append((id, Self.job(id, tokens: (0..<perJob).map { deviceToken(job: job, index: $0) }, dry: dry), perJob))
        }
        for single in 0..<singles {
            let id = "\(prefix)-one-\(single)"
            made.append((id, Self.job(id, tokens: [deviceToken(job: 500 + single, index: 0)], dry: dry), 1))
        }
        // A channel that was never made: sent, APNs would answer 400 ChannelNotRegistered.
        let cast = "\(prefix)-cast"
        let field = dry ? #","dry_run":true"# : ""
        made.append((cast, Array(#"{"id":"\#(cast)","channel_id":"AAAA"\#(field),"payload":{"aps":{"event":"update"}}}"#.utf8), 1))
        return made
    }

    /// Checks that each of `jobs` published one delivery per token with `status 0, reason
    /// "dry_run"` (nothing sent: no attempt, no apns-id) and one `job_done` counting them all, with
    /// no attempt and no first send.
    static func expectRehearsed(_ jobs: [(id: String, value: [UInt8], count: Int)], in results: [ReadRecord]) {
        let deliveries = Dictionary(grouping: Self.records(results, type: "delivery")) { $0["job_id"] as? String ?? "" }
        let done = Dictionary(grouping: Self.records(results, type: "job_done")) { $0["job_id"] as? String ?? "" }
        for job in jobs {
            let own = deliveries[job.id, default: []]
            #expect(own.count == job.count, "\(job.id): \(own.count) deliveries")
            for delivery in own {
                #expect(delivery["status"] as? Int == 0 && delivery["reason"] as? String == "dry_run", "\(delivery)")
                #expect(delivery["attempts"] as? Int == 0 && delivery["final"] as? Bool == true, "\(delivery)")
                #expect(delivery["apns_id"] is NSNull, "\(delivery)")
            }
            let recipients = Set(own.compactMap { ($0["token"] ?? $0["channel_id"]) as? String })
            #expect(recipients.count == job.count, "\(job.id): every token once")
            let summary = done[job.id, default: []]
            #expect(summary.count == 1, "\(job.id): one job_done")
            #expect(summary.first?["counts"] as? [String: Int] == ["0 dry_run": job.count], "\(job.id): \(summary)")
            // Nothing was sent: no attempt, no first send.
            #expect(summary.first?["attempts"] as? Int == 0 && summary.first?["first_sent"] is NSNull, "\(job.id): \(summary)")
        }
    }

    /// The mock's recording: one line per request it received.
    static func recordedTokens(_ path: String) throws -> [String] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return try text.split(separator: "\n").map { line in
            let entry = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return entry["token"] as? String ?? "?"
        }
    }

    /// Dry jobs (several tokens, single tokens, a broadcast, one past its deadline) and one normal
    /// job in the same run: only the normal job's requests reach the mock.
    @Test func aDryRunCampaignReachesTheMockWithNoRequest() async throws {
        let recording = try ProjectPaths.temporaryDirectory("dry-run").appendingPathComponent("requests.jsonl").path
        let harness = try await Harness.start { $0.recordFile = recording }
        let dry = Self.campaign(prefix: "dry", jobs: 8, perJob: 25, singles: 12, dry: true)
        let normalTokens = (0..<3).map { deviceToken(job: 900, index: $0) }
        let late = (0..<2).map { deviceToken(job: 901, index: $0) }
        var values = dry.map(\.value)
        var keys: [String?] = dry.map(\.id)
        values.append(Self.job("normal", tokens: normalTokens, dry: false))
        keys.append("normal")
        values.append(Self.job("late", tokens: late, dry: true, extra: #","deadline":"2020-01-01T00:00:00Z""#))
        keys.append("late")
        let reports = try await harness.produce(values, keys: keys)
        let worker = try harness.startWorker()

        let jobCount = values.count
        let results = try await harness.read(Harness.resultsTopic) { Self.records($0, type: "job_done").count >= jobCount }
        Self.expectRehearsed(dry, in: results)
        // Dry records are in the published contract (status 0, reason dry_run; apns_id null).
        try await RecordContract.validate(results, required: ["delivery", "job_done"])
        let deliveries = Self.records(results, type: "delivery")
        let normal = deliveries.filter { $0["job_id"] as? String == "normal" }
        #expect(normal.count == 3 && normal.allSatisfy { $0["status"] as? Int == 200 }, "the normal job is sent: \(normal)")
        let expired = deliveries.filter { $0["job_id"] as? String == "late" }
        #expect(expired.count == 2 && expired.allSatisfy { $0["reason"] as? String == "expired" }, "\(expired)")
        #expect(deliveries.count == dry.reduce(0) { $0 + $1.count } + 3 + 2, "one delivery per token, no more")
        #expect(Self.records(results, type: "channel_gone").isEmpty, "the dry broadcast never asked APNs")

        try await waitUntil("every job offset committed", timeout: .seconds(20)) {
            try await harness.everythingCommitted(reports).0
        }
        // A dry token is no notification sent: it counts under its own reason.
        let (_, metrics) = try await harness.scrape("/metrics")
        let dryTokens = dry.reduce(0) { $0 + $1.count }
        #expect(metrics.contains(#"pushline_notifications_total{app="default",status="0",reason="dry_run"} \#(dryTokens)"#), "\(metrics)")
        #expect(metrics.contains(#"pushline_notifications_total{app="default",status="200",reason=""} 3"#))
        #expect(harness.mock.stats.requests == 3, "only the normal job's requests: \(harness.mock.stats.requests)")
        #expect(harness.mock.stats.broadcasts == 0)

        worker.terminate()
        #expect(await worker.waitForExit(timeout: .seconds(40)) == 0)
        await harness.stop()
        #expect(try Self.recordedTokens(recording).sorted() == normalTokens.sorted(), "the mock recorded the normal job only")
    }

    /// `worker.dry_run: true` (here from the environment): jobs without the field are dry, the
    /// mock sees no request, and the worker says so at start-up.
    @Test func aDryRunWorkerSendsNoJob() async throws {
        let recording = try ProjectPaths.temporaryDirectory("dry-worker").appendingPathComponent("requests.jsonl").path
        let harness = try await Harness.start { $0.recordFile = recording }
        let jobs = Self.campaign(prefix: "plain", jobs: 4, perJob: 10, singles: 6, dry: false)
        let reports = try await harness.produce(jobs.map(\.value), keys: jobs.map(\.id))
        let worker = try harness.startWorker(environment: ["WORKER_DRY_RUN": "true"])

        let results = try await harness.read(Harness.resultsTopic) { Self.records($0, type: "job_done").count >= jobs.count }
        Self.expectRehearsed(jobs, in: results)
        #expect(Self.records(results, type: "delivery").count == jobs.reduce(0) { $0 + $1.count })
        try await waitUntil("every job offset committed", timeout: .seconds(20)) {
            try await harness.everythingCommitted(reports).0
        }
        #expect(harness.mock.stats.requests == 0)
        #expect(worker.log.contains("worker.dry_run is on: nothing will be sent to APNs"), "\(worker.log.prefix(3000))")

        worker.terminate()
        #expect(await worker.waitForExit(timeout: .seconds(40)) == 0)
        await harness.stop()
        #expect(try Self.recordedTokens(recording).isEmpty, "the mock recorded no request")
    }
}
