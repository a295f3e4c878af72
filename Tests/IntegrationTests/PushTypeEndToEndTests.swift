import Foundation
import PushlineTestSupport
import Testing

/// Jobs of all eleven push types, none naming a topic, through the worker to the mock, which
/// allows only `com.example.app` and refuses a topic without its push type's suffix.
@Suite(.serialized, .timeLimit(.minutes(3))) struct PushTypeEndToEndTests {
    /// Apple's topic and priority for each push type, written out by hand (not taken from
    /// `APNSPushType`, whose table this checks).
    static let expected: [(pushType: String, topic: String, priority: String)] = [
        ("alert", "com.example.app", "10"),
        ("background", "com.example.app", "5"),
        ("voip", "com.example.app.voip", "10"),
        ("complication", "com.example.app.complication", "10"),
        ("fileprovider", "com.example.app.pushkit.fileprovider", "10"),
        ("mdm", "com.example.app", "10"),
        ("location", "com.example.app.location-query", "10"),
        ("liveactivity", "com.example.app.push-type.liveactivity", "10"),
        ("pushtotalk", "com.example.app.voip-ptt", "10"),
        ("widgets", "com.example.app.push-type.widgets", "10"),
        ("controls", "com.example.app.push-type.controls", "10"),
    ]

    @Test func everyPushTypeReachesAPNsWithApplesTopicAndPriority() async throws {
        let recording = try ProjectPaths.temporaryDirectory("push-types").appendingPathComponent("requests.jsonl").path
        let harness = try await Harness.start {
            $0.recordFile = recording
            $0.uniqueIDs = true
        }
        var values: [[UInt8]] = []
        var keys: [String?] = []
        var tokens: [String: String] = [:]
        for (index, row) in Self.expected.enumerated() {
            let token = deviceToken(job: 900 + index, index: 0)
            tokens[token] = row.pushType
            let payload = row.pushType == "background" ? #"{"aps":{"content-available":1}}"# : #"{"aps":{"alert":"hi"}}"#
            values.append(
                Array(#"{"id":"\#(row.pushType)","token":"\#(token)","push_type":"\#(row.pushType)","payload":\#(payload)}"#.utf8)
            )
            keys.append(row.pushType)
        }
        _ = try await harness.produce(values, keys: keys)
        let worker = try harness.startWorker()

        let results = try await harness.read(Harness.resultsTopic) { records in
            records.map(json).filter { $0["type"] as? String == "delivery" }.count >= Self.expected.count
        }
        let deliveries = results.map(json).filter { $0["type"] as? String == "delivery" }
        #expect(deliveries.count == Self.expected.count)
        for delivery in deliveries {
            let pushType = tokens[delivery["token"] as? String ?? ""] ?? "?"
            #expect((delivery["apns_unique_id"] as? String)?.count == 36, "\(pushType): apns-unique-id reported")
            #expect(delivery["status"] as? Int == 200, "\(pushType): \(delivery["status"] ?? "-") \(delivery["reason"] ?? "-")")
        }
        worker.terminate()
        #expect(await worker.waitForExit(timeout: .seconds(40)) == 0)
        await harness.stop()

        // What the mock saw (its recording is complete once it has stopped).
        let lines = try String(contentsOfFile: recording, encoding: .utf8).split(separator: "\n")
        var seen: [String: [String: String]] = [:]
        for line in lines {
            guard let entry = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let token = entry["token"] as? String, let headers = entry["headers"] as? [String: String]
            else { continue }
            seen[token] = headers
        }
        for (token, pushType) in tokens {
            guard let row = Self.expected.first(where: { $0.pushType == pushType }) else { continue }
            let headers = seen[token] ?? [:]
            #expect(headers["apns-push-type"] == row.pushType, "\(pushType)")
            #expect(headers["apns-topic"] == row.topic, "\(pushType)")
            #expect(headers["apns-priority"] == row.priority, "\(pushType)")
        }
    }
}
