import Foundation
import PushlineAPNS
import PushlineAPNSCore
import Synchronization

/// The APNs client pool alone, against a running mock: notifications per second with the
/// worker's pool settings, no Kafka.
enum APNSBenchmark {
    /// Zero-padded lowercase hex (String(format:) costs more than what is being measured).
    static func hex(_ value: Int, width: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    static func run(
        endpoint: APNSEndpoint,
        caFile: String,
        keyFile: String,
        keyID: String,
        teamID: String,
        count: Int,
        connections: Int
    ) async throws -> String {
        let client = try APNSClient(
            configuration: APNSClientConfiguration(endpoint: endpoint, caFile: caFile, connections: connections),
            credential: try .token(keyFile: keyFile, keyID: keyID, teamID: teamID)
        )
        client.start()
        let payload = Array(#"{"aps":{"alert":{"title":"Sale","body":"50% off today"},"sound":"default"}}"#.utf8)
        let done = Atomic<Int>(0)
        let ok = Atomic<Int>(0)
        let ids = APNSIDGenerator()
        let batch = 100
        let window = 20_000
        let started = ContinuousClock.now
        var sent = 0
        while sent < count {
            // Keep at most `window` in flight, like the worker's max_inflight.
            while sent - done.load(ordering: .relaxed) >= window {
                try await Task.sleep(for: .microseconds(200))
            }
            let size = min(batch, count - sent)
            let notifications = (0..<size).map { index in
                APNSNotification(
                    deviceToken: hex(sent + index, width: 64),
                    topic: "com.example.app",
                    apnsID: ids.next(),
                    payload: payload
                )
            }
            client.send(notifications) { _, outcome in
                if outcome.status == 200 || outcome.status == 410 { ok.wrappingAdd(1, ordering: .relaxed) }
                done.wrappingAdd(1, ordering: .relaxed)
            }
            sent += size
        }
        while done.load(ordering: .relaxed) < count {
            try await Task.sleep(for: .milliseconds(1))
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        await client.shutdown()
        return
            #"{"benchmark":"apns_client","connections":\#(connections),"notifications":\#(count),"answered":\#(ok.load(ordering: .relaxed)),"seconds":\#(String(format: "%.2f", seconds)),"notifications_per_second":\#(Int(Double(count) / seconds))}"#
    }
}
