import Foundation
import PushlineTestSupport
import Testing

/// Duplicates invisible on the device (`worker.collapse_duplicates`, on by default), on the wire:
/// jobs without a `collapse_id` through the broker and the worker to the mock, whose recording
/// shows each request's `apns-collapse-id`. A short id is its own collapse id, a long one or one
/// no header may carry is hashed (expected values computed apart, with Python's hashlib), a job's
/// own collapse id wins, and a job enqueued twice (a redelivery: the same record again) sends both
/// copies with the same one, so the second replaces the first on the device. Turned off, only the
/// job with its own collapse id carries one.
@Suite(.serialized, .timeLimit(.minutes(4))) struct DerivedCollapseIDEndToEndTests {
    /// One job record: its id (as JSON writes it), its tokens, its own collapse id, how many times
    /// it is enqueued, and the collapse id its requests must carry when duplicates collapse.
    struct Sent {
        var id: String
        var tokens: [String]
        var own: String? = nil
        var copies = 1
        var derived: String

        var record: [UInt8] {
            var fields = #""id":"\#(id)","tokens":[\#(tokens.map { "\"\($0)\"" }.joined(separator: ","))]"#
            if let own { fields += #","collapse_id":"\#(own)""# }
            return Array("{\(fields),\"payload\":{\"aps\":{\"alert\":\"hi\"}}}".utf8)
        }
    }

    static let longID = "campaign-2026-11-28/" + String(repeating: "x", count: 100)

    static let jobs: [Sent] = {
        var jobs = [
            Sent(id: "short-1", tokens: [deviceToken(job: 0, index: 0), deviceToken(job: 0, index: 1)], derived: "short-1"),
            Sent(
                id: longID,
                tokens: [deviceToken(job: 1, index: 0), deviceToken(job: 1, index: 1)],
                derived: "pl-bfa0ea2090764b8f0525a72363ecb757"
            ),
            // A trailing space: no header value may end with one.
            Sent(id: "redo 1 ", tokens: [deviceToken(job: 2, index: 0)], derived: "pl-9f50f45211fac9095b1f513a8dc07ca4"),
            Sent(id: "own-3", tokens: [deviceToken(job: 3, index: 0)], own: "score", derived: "score"),
            Sent(id: "again-4", tokens: [deviceToken(job: 4, index: 0), deviceToken(job: 4, index: 1)], copies: 2, derived: "again-4"),
        ]
        // Single-token jobs, which the worker sends in groups: each with its own derived id, and
        // the same job again among them.
        for job in 5..<25 {
            jobs.append(
                Sent(id: "solo-\(job)", tokens: [deviceToken(job: job, index: 0)], copies: job == 9 ? 2 : 1, derived: "solo-\(job)")
            )
        }
        return jobs
    }()

    /// Runs every job (each copy) through a worker; returns each token's recorded requests'
    /// `apns-collapse-id` values (nil where absent).
    func collapseIDsSent(environment: [String: String]) async throws -> [String: [String?]] {
        let recording = try ProjectPaths.temporaryDirectory("derived-collapse").appendingPathComponent("requests.jsonl").path
        let harness = try await Harness.start { $0.recordFile = recording }
        var values: [[UInt8]] = []
        var keys: [String?] = []
        for job in Self.jobs {
            for _ in 0..<job.copies {
                values.append(job.record)
                keys.append(job.id)
            }
        }
        _ = try await harness.produce(values, keys: keys)
        let worker = try harness.startWorker(environment: environment)
        let jobRecords = values.count
        let results = try await harness.read(Harness.resultsTopic) { records in
            records.map(json).filter { $0["type"] as? String == "job_done" }.count >= jobRecords
        }
        let statuses = results.map(json).filter { $0["type"] as? String == "delivery" }.map { $0["status"] as? Int ?? -1 }
        #expect(statuses.count == Self.jobs.map { $0.tokens.count * $0.copies }.reduce(0, +) && statuses.allSatisfy { $0 == 200 })
        worker.terminate()
        #expect(await worker.waitForExit(timeout: .seconds(40)) == 0)
        await harness.stop()

        // What the mock saw (its recording is complete once it has stopped).
        var sent: [String: [String?]] = [:]
        for line in try String(contentsOfFile: recording, encoding: .utf8).split(separator: "\n") {
            let entry = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let token = try #require(entry["token"] as? String)
            let headers = try #require(entry["headers"] as? [String: String])
            sent[token, default: []].append(headers["apns-collapse-id"])
        }
        return sent
    }

    @Test func aRedeliveredJobsRequestsCarryItsDerivedCollapseID() async throws {
        let sent = try await collapseIDsSent(environment: [:])
        var expected: [String: [String?]] = [:]
        for job in Self.jobs {
            for token in job.tokens { expected[token] = Array(repeating: job.derived, count: job.copies) }
        }
        #expect(sent.count == expected.count, "a request for every token")
        for (token, values) in expected {
            #expect(sent[token] == values, "token \(token.suffix(8))")
        }
        // Both copies of the redelivered jobs: two requests per token, one collapse id.
        #expect(sent[deviceToken(job: 4, index: 1)] == ["again-4", "again-4"])
        #expect(sent[deviceToken(job: 9, index: 0)] == ["solo-9", "solo-9"])
    }

    @Test func turnedOffOnlyAJobsOwnCollapseIDIsSent() async throws {
        let sent = try await collapseIDsSent(environment: ["WORKER_COLLAPSE_DUPLICATES": "false"])
        var expected: [String: [String?]] = [:]
        for job in Self.jobs {
            for token in job.tokens { expected[token] = Array(repeating: job.own, count: job.copies) }
        }
        #expect(sent.count == expected.count, "a request for every token")
        for (token, values) in expected {
            #expect(sent[token] == values, "token \(token.suffix(8))")
        }
        #expect(sent[deviceToken(job: 3, index: 0)] == ["score"])
    }
}
