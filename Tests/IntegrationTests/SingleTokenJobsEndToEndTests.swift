import Foundation
import PushlineTestSupport
import Testing

/// Single-token jobs, each with a payload of its own, through the worker to the mock: the worker
/// sends a group's jobs alike as one request batch, so this checks, on the wire, that each
/// token's request carries its own job's payload, collapse id and expiration, and that each
/// delivery record names the `apns-id` its request went with.
@Suite(.serialized, .timeLimit(.minutes(3))) struct SingleTokenJobsEndToEndTests {
    @Test func eachTokenGetsItsOwnJobsPayloadAndHeaders() async throws {
        let recording = try ProjectPaths.temporaryDirectory("single-token").appendingPathComponent("requests.jsonl").path
        let harness = try await Harness.start { $0.recordFile = recording }
        let count = 600
        var values: [[UInt8]] = []
        var keys: [String?] = []
        // Per token: its job's payload length, collapse id and expiration. Every seventh job has a
        // collapse id of its own, the others their derived one (their id, each its own), and every
        // eleventh an expiration, so groups mix runs alike and apart.
        var expected: [String: (payloadBytes: Int, collapseID: String?, expiration: String?)] = [:]
        for job in 0..<count {
            let token = deviceToken(job: job, index: 0)
            let payload = #"{"aps":{"alert":"\#(String(repeating: "x", count: job % 97))"}}"#
            let collapseID = job % 7 == 0 ? "c\(job)" : nil
            let expiration = job % 11 == 0 ? String(4_102_444_800 + job) : nil
            var fields = #""id":"single-\#(job)","token":"\#(token)""#
            if let collapseID { fields += #","collapse_id":"\#(collapseID)""# }
            if let expiration { fields += #","expiration":\#(expiration)"# }
            values.append(Array("{\(fields),\"payload\":\(payload)}".utf8))
            keys.append("single-\(job)")
            // A job without its own collapse id goes with its id (`worker.collapse_duplicates`).
            expected[token] = (payload.utf8.count, collapseID ?? "single-\(job)", expiration)
        }
        _ = try await harness.produce(values, keys: keys)
        let worker = try harness.startWorker()

        let results = try await harness.read(Harness.resultsTopic) { records in
            records.map(json).filter { $0["type"] as? String == "job_done" }.count >= count
        }
        let deliveries = results.map(json).filter { $0["type"] as? String == "delivery" }
        #expect(deliveries.count == count)
        var recordedIDs: [String: String] = [:]
        for delivery in deliveries {
            let token = delivery["token"] as? String ?? ""
            #expect(delivery["job_id"] as? String == "single-\(Int(token.suffix(16).prefix(8), radix: 16) ?? -1)", "\(token)")
            #expect(delivery["status"] as? Int == 200, "\(token)")
            recordedIDs[token] = delivery["apns_id"] as? String
        }
        worker.terminate()
        #expect(await worker.waitForExit(timeout: .seconds(40)) == 0)
        await harness.stop()

        // What the mock saw (its recording is complete once it has stopped).
        let lines = try String(contentsOfFile: recording, encoding: .utf8).split(separator: "\n")
        // One request per job: the harness gives requests 60 s, so that a loaded host's late answer
        // is not sent again and counted here (on CI, with 5 s, 1,197 requests for 600 jobs).
        #expect(lines.count == count, "one request per job")
        var seen = Set<String>()
        for line in lines {
            let entry = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let token = try #require(entry["token"] as? String)
            let headers = try #require(entry["headers"] as? [String: String])
            let job = try #require(expected[token], "a request to a token no job has")
            #expect(entry["payload_bytes"] as? Int == job.payloadBytes, "\(token): its own job's payload")
            #expect(headers["apns-collapse-id"] == job.collapseID, "\(token)")
            #expect(headers["apns-expiration"] == job.expiration, "\(token)")
            let sentID = try #require(headers["apns-id"], "\(token): no apns-id")
            #expect(sentID.lowercased() == recordedIDs[token]?.lowercased(), "\(token): the record's apns_id")
            seen.insert(token)
        }
        #expect(seen.count == count)
    }
}
