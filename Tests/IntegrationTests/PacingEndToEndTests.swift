import Foundation
import PushlineTestSupport
import Synchronization
import Testing

/// `apps.NAME.max_rate`: a paced app's notifications leave at its rate, not as fast as the
/// streams allow.
@Suite(.serialized, .timeLimit(.minutes(3))) struct PacingEndToEndTests {
    @Test func aPacedAppSendsAtItsRate() async throws {
        let override = AppsOverride(
            apps: { mock in
                ["default": AppsOverride.tokenApp(keyFrom: mock, ["max_rate": 200])]
            },
            caFile: { $0.caFile }
        )
        let harness = try await Harness.start(apps: override)
        var values: [[UInt8]] = []
        var keys: [String] = []
        for job in 0..<6 {
            let list = (0..<100).map { "\"\(deviceToken(job: job, index: $0))\"" }.joined(separator: ",")
            values.append(Array(#"{"id":"paced-\#(job)","tokens":[\#(list)],"payload":{"aps":{}}}"#.utf8))
            keys.append("paced-\(job)")
        }
        _ = try await harness.produce(values, keys: keys)
        let worker = try harness.startWorker()

        // When the first and the last of the 600 deliveries were read (the reader looks every 200 ms).
        let firstSeen = Mutex<ContinuousClock.Instant?>(nil)
        let results = try await harness.read(Harness.resultsTopic) { records in
            let count = records.count
            if count > 0 { firstSeen.withLock { $0 = $0 ?? .now } }
            return count >= 600
        }
        let spread = ContinuousClock.now - (firstSeen.withLock { $0 } ?? .now)
        #expect(results.map(json).filter { $0["status"] as? Int == 200 }.count == 600)
        // 600 at 200/s after a burst of 10 take about 3 s; unpaced, they arrive within a fetch or two.
        #expect(spread >= .seconds(2), "600 notifications spread over \(spread) at max_rate 200")
        let (_, metrics) = try await harness.scrape("/metrics")
        #expect(metrics.contains(#"pushline_app_max_rate{app="default"} 200"#))
        worker.terminate()
        #expect(await worker.waitForExit(timeout: .seconds(40)) == 0)
        await harness.stop()
    }
}
