import CoreMetrics
import Prometheus
import PushlineAPNS
import Testing

@testable import PushlineWorker

/// A run's durations counted in place (`TimerTally`) and recorded together expose exactly what
/// recording each value on its own does, across timers that take turns and several flushes.
@Suite struct TimerTallyTests {
    @Test func aTallyRecordsWhatEachValueWould() {
        let direct = PushlineMetricsFactory(registry: PrometheusCollectorRegistry())
        let tallied = PushlineMetricsFactory(registry: PrometheusCollectorRegistry())
        func timers(_ factory: PushlineMetricsFactory) -> [HistogramTimer] {
            ["a", "b"].map { HistogramTimer(label: "pushline_test_latency_seconds", dimensions: [("app", $0)], factory: factory) }
        }
        let (plain, counted) = (timers(direct), timers(tallied))
        #expect(counted.allSatisfy { $0.histogram != nil })
        let tally = TimerTally()
        for (index, value) in AtomicTimerHistogramTests.values.enumerated() {
            // Runs of one timer, then the other; a flush now and then, as runs end.
            let timer = index / 4 % 2
            plain[timer].recordNanoseconds(value)
            tally.record(value, in: counted[timer])
            if index % 7 == 6 { tally.flush() }
        }
        // Nothing counted since the last flush shows until the next one.
        #expect(tallied.exposition() != direct.exposition())
        tally.flush()
        #expect(String(decoding: tallied.exposition(), as: UTF8.self) == String(decoding: direct.exposition(), as: UTF8.self))
        tally.flush()
        #expect(String(decoding: tallied.exposition(), as: UTF8.self) == String(decoding: direct.exposition(), as: UTF8.self))
    }

    /// Under another metrics backend the timer has no histogram of ours: each value goes
    /// straight to it.
    @Test func anotherBackendGetsEachValueAtOnce() {
        let reference = PrometheusCollectorRegistry()
        let timer = HistogramTimer(
            label: "pushline_test_latency_seconds",
            dimensions: [],
            factory: PrometheusMetricsFactory(registry: reference)
        )
        #expect(timer.histogram == nil)
        let tally = TimerTally()
        tally.record(3_000_000, in: timer)
        #expect(reference.emitToString().contains("pushline_test_latency_seconds_count 1\n"))
    }
}
