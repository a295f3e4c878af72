import Foundation
import PushlineTestSupport
import Testing

/// A mixed campaign through the worker to the mock over two connections: jobs whose
/// `apns-expiration`, `apns-collapse-id`, `apns-priority` and `apns-push-type` change from one job
/// to the next (and come back), each of many tokens. Every request the mock recorded must carry
/// its own job's headers, none of a neighbour's (issue 49: an HPACK field memo wrote the previous
/// job's values into the next job's requests). A job without a collapse id of its own is sent with
/// its id as one (`worker.collapse_duplicates`, on by default): values that change job to job.
@Suite(.serialized, .timeLimit(.minutes(6))) struct HeaderFidelityEndToEndTests {
    static let jobCount = 1_000
    static let tokensPerJob = 20
    static let connections = 2

    /// What one job's requests must carry; nil: the header must be absent.
    struct JobHeaders {
        var pushType: String
        var priority: String
        var expiration: String?
        var collapseID: String?
        var payload: String

        /// Job `job`'s values. Two jobs in three are alerts (priority 10 and 5 by turns), one in
        /// three a background push at 5; every seventh has neither an expiration nor a collapse
        /// id, and two in seven have only one of them. The others have both, their own, but for
        /// every fifth job, whose values are those of the job three before it: values come back
        /// after others, as a campaign's collapse ids do.
        init(job: Int) {
            let background = job % 3 == 2
            pushType = background ? "background" : "alert"
            priority = background || job % 2 == 1 ? "5" : "10"
            let source = job % 5 == 4 ? job - 3 : job
            expiration = job % 7 == 0 || job % 7 == 5 ? nil : String(2_000_000_000 + source)
            collapseID = job % 7 == 0 || job % 7 == 3 ? nil : "c-\(source)"
            // Alerts of their own length, so a body sent with another job's request shows too.
            payload =
                background
                ? #"{"aps":{"content-available":1}}"#
                : #"{"aps":{"alert":"job \#(job) \#(String(repeating: "x", count: job % 50))"}}"#
        }

        /// The job record, with the fields it has.
        func record(id: String, tokens: [String]) -> [UInt8] {
            var fields = #""id":"\#(id)","tokens":[\#(tokens.map { "\"\($0)\"" }.joined(separator: ","))]"#
            fields += #","push_type":"\#(pushType)","priority":\#(priority)"#
            if let expiration { fields += #","expiration":\#(expiration)"# }
            if let collapseID { fields += #","collapse_id":"\#(collapseID)""# }
            return Array("{\(fields),\"payload\":\(payload)}".utf8)
        }
    }

    @Test func everyRequestCarriesItsOwnJobsHeaders() async throws {
        let recording = try ProjectPaths.temporaryDirectory("header-fidelity").appendingPathComponent("requests.jsonl").path
        // Both connections from the start: the test checks that each carries requests.
        let harness = try await Harness.start(connections: Self.connections, connectSpacingMilliseconds: 0) {
            $0.recordFile = recording
            $0.uniqueIDs = true
        }
        var values: [[UInt8]] = []
        var keys: [String?] = []
        var jobOfToken: [String: Int] = [:]
        for job in 0..<Self.jobCount {
            let tokens = (0..<Self.tokensPerJob).map { deviceToken(job: job, index: $0) }
            for token in tokens { jobOfToken[token] = job }
            values.append(JobHeaders(job: job).record(id: "hf-\(job)", tokens: tokens))
            keys.append("hf-\(job)")
        }
        let requestCount = Self.jobCount * Self.tokensPerJob
        try #require(jobOfToken.count == requestCount, "a distinct token per request")
        _ = try await harness.produce(values, keys: keys)
        // A request that times out is sent again (the mock then records it twice), which this
        // test would count as a header fault: the harness gives requests 60 s (on a loaded CI host
        // a 5 s deadline once fired and 998 requests were resent).
        let worker = try harness.startWorker()

        // In full results mode every job ends with a delivery record per token and one job_done;
        // all are 200s, so there are no invalidation records.
        let expectedRecords = requestCount + Self.jobCount
        // 20,000 recorded requests: about 40 s alone, 130 s beside the other 22 suites on CI's two
        // cores. The read waits for them, not for a time: it bounds only a hang.
        let results = try await harness.read(Harness.resultsTopic, timeout: .seconds(240)) { $0.count >= expectedRecords }
        var apnsIDOfToken: [String: String] = [:]
        var finalDeliveries = 0
        var jobsDone = Set<String>()
        var wrongResults: [String] = []
        for record in results.map(json) {
            switch record["type"] as? String {
            case "delivery":
                let token = record["token"] as? String ?? ""
                apnsIDOfToken[token] = (record["apns_id"] as? String)?.lowercased()
                let (jobID, status) = (record["job_id"] as? String, record["status"] as? Int)
                guard jobID == jobOfToken[token].map({ "hf-\($0)" }), status == 200, record["final"] as? Bool == true else {
                    let reason = record["reason"] as? String ?? "-"
                    wrongResults.append("\(jobID ?? "?") token \(token.suffix(8)): \(status ?? -1) \(reason)")
                    continue
                }
                finalDeliveries += 1
            case "job_done":
                jobsDone.insert(record["job_id"] as? String ?? "")
            case let type:
                wrongResults.append("a record of type \(type ?? "?")")
            }
        }
        #expect(wrongResults.isEmpty, "\(wrongResults.count) result records other than a final 200: \(wrongResults.prefix(3))")
        #expect(finalDeliveries == requestCount && apnsIDOfToken.count == requestCount, "a final 200 for each token")
        #expect(jobsDone.count == Self.jobCount, "a job_done for every job")
        let mockStats = harness.mock.stats
        #expect(mockStats.connections == Self.connections, "the worker's connections to the mock")
        worker.terminate()
        #expect(await worker.waitForExit(timeout: .seconds(40)) == 0)
        await harness.stop()

        // What the mock saw (its recording is complete once it has stopped): every request, once,
        // each answered 200, with its own job's headers and body.
        let lines = try String(contentsOfFile: recording, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == requestCount, "one recorded request per token")
        var requestsOfToken: [String: Int] = [:]
        var requestsOfConnection: [Int: Int] = [:]
        var statuses: [String: Int] = [:]
        var mismatches: [String: Int] = [:]
        var examples: [String] = []
        for line in lines {
            let entry = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let token = try #require(entry["token"] as? String)
            let headers = try #require(entry["headers"] as? [String: String])
            let job = try #require(jobOfToken[token], "a request to a token no job has: \(token)")
            requestsOfToken[token, default: 0] += 1
            requestsOfConnection[entry["connection"] as? Int ?? -1, default: 0] += 1
            let status = entry["status"] as? Int ?? -1
            statuses[status == 200 ? "200" : "\(status) \(entry["reason"] as? String ?? "-")", default: 0] += 1

            let expected = JobHeaders(job: job)
            let checks: [(field: String, sent: String?, expected: String?)] = [
                // A job without its own goes with its id (`worker.collapse_duplicates`, on by default).
                ("apns-collapse-id", headers["apns-collapse-id"], expected.collapseID ?? "hf-\(job)"),
                ("apns-expiration", headers["apns-expiration"], expected.expiration),
                ("apns-priority", headers["apns-priority"], expected.priority),
                ("apns-push-type", headers["apns-push-type"], expected.pushType),
                ("apns-topic", headers["apns-topic"], MockFixture.bundleID),
                ("apns-id", headers["apns-id"]?.lowercased(), apnsIDOfToken[token]),
                ("payload_bytes", (entry["payload_bytes"] as? Int).map(String.init), String(expected.payload.utf8.count)),
            ]
            for check in checks where check.sent != check.expected {
                mismatches[check.field, default: 0] += 1
                if mismatches[check.field] ?? 0 <= 2 {
                    examples.append(
                        "job \(job) token \(token.suffix(8)): \(check.field) \(check.sent ?? "absent"), expected \(check.expected ?? "absent")"
                    )
                }
            }
        }
        #expect(requestsOfToken.count == requestCount, "\(requestCount - requestsOfToken.count) tokens never recorded")
        #expect(requestsOfToken.values.allSatisfy { $0 == 1 }, "a token recorded more than once")
        #expect(statuses == ["200": requestCount], "the mock's answers: \(statuses)")
        #expect(
            requestsOfConnection.count == Self.connections && requestsOfConnection.values.allSatisfy { $0 > 0 },
            "requests per connection: \(requestsOfConnection)"
        )
        let counts = mismatches.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        #expect(
            mismatches.isEmpty,
            "requests with another job's values, of \(lines.count): \(counts); for example:\n\(examples.joined(separator: "\n"))"
        )
        print("header fidelity: \(lines.count) requests over \(requestsOfConnection.count) connections checked, mismatches: [\(counts)]")
    }
}
