import CoreMetrics
import Prometheus
import Testing

@testable import PushlineWorker

@Suite struct AtomicTimerHistogramTests {
    /// Values below, on and between the bounds, above every bound, zero and negative.
    static let values: [Int64] = [
        0, -3, 1, 4_999_999, 5_000_000, 5_000_001, 12_345_678, 250_000_000, 999_999_999, 1_000_000_000,
        2_500_000_001, 9_999_999_999, 10_000_000_000, 20_000_000_000, 777,
    ]

    /// The same timers through swift-prometheus's own factory and through ours: the exposition
    /// must be the same bytes, so dashboards and the bench's parser see no change.
    @Test func exposesWhatSwiftPrometheusWould() {
        let reference = PrometheusCollectorRegistry()
        let referenceFactory = PrometheusMetricsFactory(registry: reference)
        let ours = PushlineMetricsFactory(registry: PrometheusCollectorRegistry())
        for factory in [referenceFactory as any MetricsFactory, ours] {
            let a = factory.makeTimer(label: "pushline_test_latency_seconds", dimensions: [("app", "default")])
            let b = factory.makeTimer(label: "pushline_test_latency_seconds", dimensions: [("app", "we\"ird\\app\n")])
            let bare = factory.makeTimer(label: "pushline_test_age_seconds", dimensions: [])
            for (index, value) in Self.values.enumerated() {
                a.recordNanoseconds(value)
                if index % 2 == 0 { b.recordNanoseconds(value * 3) }
                if index % 3 == 0 { bare.recordNanoseconds(value / 7) }
            }
            // The same name and labels again is the same series.
            factory.makeTimer(label: "pushline_test_latency_seconds", dimensions: [("app", "default")]).recordNanoseconds(42)
        }
        #expect(Self.families(String(decoding: ours.exposition(), as: UTF8.self)) == Self.families(reference.emitToString()))
    }

    @Test func countsEveryRecordFromManyThreads() async {
        let factory = PushlineMetricsFactory(registry: PrometheusCollectorRegistry())
        let timer = factory.makeTimer(label: "pushline_test_latency_seconds", dimensions: [])
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<10_000 { timer.recordNanoseconds(Int64((task * 10_000 + index) * 1_000)) }
                }
            }
        }
        let text = String(decoding: factory.exposition(), as: UTF8.self)
        #expect(text.contains("pushline_test_latency_seconds_count 80000\n"))
        #expect(text.contains("pushline_test_latency_seconds_bucket{le=\"+Inf\"} 80000\n"))
        // Values 0 ... 79,999 µs: 5,001 of them at or below 5 ms.
        #expect(text.contains("pushline_test_latency_seconds_bucket{le=\"0.005\"} 5001\n"))
    }

    @Test func aDestroyedTimerLeavesTheExposition() {
        let factory = PushlineMetricsFactory(registry: PrometheusCollectorRegistry())
        let timer = factory.makeTimer(label: "pushline_test_latency_seconds", dimensions: [("app", "a")])
        timer.recordNanoseconds(1)
        factory.destroyTimer(timer)
        #expect(!String(decoding: factory.exposition(), as: UTF8.self).contains("pushline_test_latency_seconds"))
    }

    /// Each family's lines (its TYPE line and its series' lines) keyed by name: the registry
    /// writes families, and series within one, in no fixed order.
    private static func families(_ text: String) -> [String: Set<String>] {
        var families: [String: Set<String>] = [:]
        var current = ""
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") { current = String(line.split(separator: " ")[2]) }
            families[current, default: []].insert(String(line))
        }
        return families
    }
}
