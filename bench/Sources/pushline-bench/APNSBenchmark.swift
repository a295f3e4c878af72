import Foundation
import PushlineAPNS
import PushlineAPNSCore
import Synchronization

/// The APNs client pool alone, against a running mock: notifications per second with the
/// worker's pool settings, no Kafka.
enum APNSBenchmark {
    /// User plus system CPU of this process so far (all threads), in seconds.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// Zero-padded lowercase hex, built in bytes: the load loop should cost little next to what is
    /// being measured (string appends cost about a tenth of the client's CPU).
    static func hex(_ value: Int, width: Int) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes = [UInt8](repeating: UInt8(ascii: "0"), count: width)
        var rest = value
        var index = width - 1
        while rest > 0, index >= 0 {
            bytes[index] = digits[rest & 15]
            rest >>= 4
            index -= 1
        }
        return String(decoding: bytes, as: UTF8.self)
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
        let cpuBefore = processCPUSeconds()
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
        let cpu = processCPUSeconds() - cpuBefore
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        await client.shutdown()
        return
            #"{"benchmark":"apns_client","connections":\#(connections),"notifications":\#(count),"answered":\#(ok.load(ordering: .relaxed)),"seconds":\#(String(format: "%.2f", seconds)),"notifications_per_second":\#(Int(Double(count) / seconds)),"cpu_us_per_notification":\#(String(format: "%.2f", cpu / Double(count) * 1e6))}"#
    }
}
