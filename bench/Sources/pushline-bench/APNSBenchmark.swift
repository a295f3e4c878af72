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

    /// `value` as zero-padded lowercase hex, filling `bytes`: the load loop should cost little next
    /// to what is being measured (string appends cost about a tenth of the client's CPU).
    static func hex(_ value: Int, into bytes: UnsafeMutableBufferPointer<UInt8>) {
        let digits: StaticString = "0123456789abcdef"
        var rest = value
        for index in stride(from: bytes.count - 1, through: 0, by: -1) {
            bytes[index] = digits.utf8Start[rest & 15]
            rest >>= 4
        }
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
            // A job's shape, as the worker hands it over: the tokens as bytes, a block of ids.
            var tokens = APNSDeviceTokens()
            tokens.reserveCapacity(tokens: size)
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { token in
                for index in 0..<size {
                    hex(sent + index, into: token)
                    tokens.append(bytes: UnsafeRawBufferPointer(token))
                }
            }
            let notifications = APNSNotificationBatch(tokens: tokens, ids: ids.reserve(size), topic: "com.example.app", payload: payload)
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
