import Foundation
import PushlineAPNS
import PushlineAPNSCore
import PushlineTestSupport
import Synchronization
import Testing

/// `APNSClient.send(_ batch: APNSNotificationBatch)` against the mock over TLS: every token gets
/// its own request, with its own id on the wire, and exactly one outcome.
@Suite struct NotificationBatchTests {
    @Test func eachTokenOfABatchGoesWithItsOwnIDAndEndsOnce() async throws {
        let directory = try ProjectPaths.temporaryDirectory("batch")
        defer { try? FileManager.default.removeItem(at: directory) }
        let record = directory.appendingPathComponent("requests.jsonl").path
        let count = 300
        let gone: Set<Int> = [3, 7, 250]
        let fixture = try await MockFixture.start { configuration in
            configuration.recordFile = record
            configuration.maxStreams = 40
            configuration.unregisteredTokens = Set(gone.map(APNSClientTests.token))
        }
        let client = try APNSClientTests().tokenClient(fixture, connections: 2)
        client.start()
        let ids = APNSIDGenerator().reserve(count)
        let batch = APNSNotificationBatch(
            tokens: APNSDeviceTokens((0..<count).map(APNSClientTests.token)),
            ids: ids,
            topic: MockFixture.bundleID,
            payload: Array(#"{"aps":{"alert":"hello"}}"#.utf8)
        )
        let outcomes = Mutex<[Int: [APNSOutcome]]>([:])
        let done = Atomic<Int>(0)
        client.send(batch) { index, outcome in
            outcomes.withLock { $0[index, default: []].append(outcome) }
            done.wrappingAdd(1, ordering: .relaxed)
        }
        try await waitUntil("\(count) outcomes", timeout: .seconds(60)) { done.load(ordering: .relaxed) >= count }
        await client.shutdown()
        #expect(fixture.stats.limitViolations == 0)
        try await fixture.stop()

        let ended = outcomes.withLock { $0 }
        #expect(ended.count == count && ended.values.allSatisfy { $0.count == 1 }, "one outcome per token")
        for (index, outcomes) in ended {
            #expect(outcomes[0].status == (gone.contains(index) ? 410 : 200), "token \(index)")
            #expect(outcomes[0].response?.apnsID == nil, "the mock echoes the request's own id")
        }

        // On the wire: each token's request carried the id of its index, a valid UUID (the mock
        // refuses others with BadMessageId).
        let lines = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == count)
        var seen = Set<Int>()
        for line in lines {
            let request = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let token = try #require(request["token"] as? String)
            let index = try #require(Int(token, radix: 16))
            let headers = try #require(request["headers"] as? [String: String])
            #expect(headers["apns-id"] == ids.id(at: index), "token \(index)")
            seen.insert(index)
        }
        #expect(seen.count == count)
    }
}
