import Foundation
import PushlineTestSupport
import Testing

/// Personalised jobs through the broker, the worker and the mock (its recording keeps each
/// request's payload): every token's request carries its own rendered payload, JSON-escaped
/// values included; a token whose variable is missing and one whose payload renders too large end
/// with their own final records while the rest are delivered; the `job_done` counts add up. A
/// plain job beside it is sent byte for byte, its `{{` included.
@Suite(.serialized, .timeLimit(.minutes(4))) struct PersonalisedJobEndToEndTests {
    static let padding = String(repeating: "p", count: 3000)
    static let template =
        #"{"aps":{"alert":{"title":"Hi {{name}}","body":"You have {{ count |no}} new"}},"pad":"\#(padding)","k{{name}}":"{{name}}!"}"#
    static let longName = String(repeating: "L", count: 1000)

    /// Each token's `tokens` entry and what its request's title and body must say (nil: no
    /// request; `reason` then names its record's).
    struct Token {
        var entry: String
        var title: String?
        var body: String?
        var reason: String?
    }

    static func tokens(job: Int) -> [(token: String, spec: Token)] {
        let specs = [
            Token(entry: #"{"name":"Anna","count":3}"#, title: "Hi Anna", body: "You have 3 new"),
            Token(
                entry: #"{"name":"Bj\"ö\\rn\n\u0001 \ud83d\ude00","count":1.5e1}"#,
                title: "Hi Bj\"ö\\rn\n\u{01} 😀",
                body: "You have 1.5e1 new"
            ),
            Token(entry: #"{"count":2}"#, reason: "missing_variable"),
            Token(entry: #"{"name":"Zed","count":null}"#, title: "Hi Zed", body: "You have no new"),
            Token(entry: #"{"name":"\#(longName)","count":1}"#, reason: "payload_too_large"),
            Token(entry: "", reason: "missing_variable"),
            Token(entry: #"{"name":true,"count":false}"#, title: "Hi true", body: "You have false new"),
        ]
        return specs.enumerated().map { index, spec in (deviceToken(job: job, index: index), spec) }
    }

    static func record(job: Int) -> [UInt8] {
        let entries = tokens(job: job).map { token, spec in
            spec.entry.isEmpty ? "\"\(token)\"" : #"{"token":"\#(token)","vars":\#(spec.entry)}"#
        }
        return Array(#"{"id":"pers-\#(job)","tokens":[\#(entries.joined(separator: ","))],"payload":\#(template)}"#.utf8)
    }

    static let plainPayload = #"{"aps":{"alert":"{{name}} stays as written"}}"#

    @Test func eachTokensRequestCarriesItsOwnRenderedPayloadAndUnrenderableTokensEndWithTheirOwnRecords() async throws {
        let recording = try ProjectPaths.temporaryDirectory("personalised").appendingPathComponent("requests.jsonl").path
        let harness = try await Harness.start { $0.recordFile = recording }
        let jobs = [0, 1]
        let plainToken = deviceToken(job: 9, index: 0)
        let values = jobs.map(Self.record) + [Array(#"{"id":"plain-9","tokens":["\#(plainToken)"],"payload":\#(Self.plainPayload)}"#.utf8)]
        let jobCount = values.count
        _ = try await harness.produce(values, keys: ["pers-0", "pers-1", "plain-9"])
        let worker = try harness.startWorker()
        let results = try await harness.read(Harness.resultsTopic) { records in
            records.map(json).filter { $0["type"] as? String == "job_done" }.count >= jobCount
        }
        worker.terminate()
        #expect(await worker.waitForExit(timeout: .seconds(40)) == 0)
        await harness.stop()

        // Every record, the unrendered tokens' included, as docs/schemas describe them.
        try await RecordContract.validate(results, required: ["delivery", "job_done"])
        let objects = results.map(json)
        var requests: [String: [String]] = [:]
        for line in try String(contentsOfFile: recording, encoding: .utf8).split(separator: "\n") {
            let entry = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            requests[try #require(entry["token"] as? String), default: []].append(try #require(entry["payload"] as? String))
        }
        #expect(requests[plainToken] == [Self.plainPayload], "a plain job's payload is sent as written")

        for job in jobs {
            let id = "pers-\(job)"
            let deliveries = objects.filter { $0["type"] as? String == "delivery" && $0["job_id"] as? String == id }
            var expectedCounts: [String: Int] = [:]
            for (token, spec) in Self.tokens(job: job) {
                let records = deliveries.filter { $0["token"] as? String == token }
                #expect(records.count == 1, "\(id) token \(token.suffix(4)): one final record")
                let record = try #require(records.first)
                #expect(record["final"] as? Bool == true)
                if let reason = spec.reason {
                    #expect(record["status"] as? Int == 0 && record["reason"] as? String == reason, "\(token.suffix(4)): \(record)")
                    #expect(requests[token] == nil, "\(token.suffix(4)): no request")
                    expectedCounts["0 \(reason)", default: 0] += 1
                    continue
                }
                #expect(record["status"] as? Int == 200, "\(token.suffix(4)): \(record)")
                expectedCounts["200", default: 0] += 1
                let sent = try #require(requests[token], "\(token.suffix(4)): a request")
                #expect(sent.count == 1)
                let text = try #require(sent.first)
                let payload = try #require(
                    try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                    "\(token.suffix(4)): valid JSON"
                )
                let alert = (payload["aps"] as? [String: Any])?["alert"] as? [String: Any]
                #expect(alert?["title"] as? String == spec.title, "\(token.suffix(4))")
                #expect(alert?["body"] as? String == spec.body, "\(token.suffix(4))")
                #expect(payload["pad"] as? String == Self.padding)
                // A key is never a template; its value is.
                #expect(payload["k{{name}}"] as? String == spec.title.map { String($0.dropFirst(3)) + "!" })
            }
            let done = try #require(objects.first { $0["type"] as? String == "job_done" && $0["job_id"] as? String == id })
            #expect(done["tokens"] as? Int == 7)
            #expect(done["counts"] as? [String: Int] == expectedCounts, "\(done)")
            #expect(expectedCounts == ["200": 4, "0 missing_variable": 2, "0 payload_too_large": 1])
        }
    }
}
