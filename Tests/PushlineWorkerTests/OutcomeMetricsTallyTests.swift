import CoreMetrics
import Prometheus
import Testing

@testable import PushlineWorker

/// A run's outcomes other than a plain 2xx, counted in place (`OutcomeMetricsTally.other`) and
/// recorded when the run ends, expose what incrementing each one's counter at once does, across
/// apps, statuses and reasons that take turns and several flushes; the counter is looked up only
/// when the outcome changes.
@Suite struct OutcomeMetricsTallyTests {
    final class App {}

    @Test func otherOutcomesAreCountedAsEachIncrementWouldBe() {
        let direct = PushlineMetricsFactory(registry: PrometheusCollectorRegistry())
        let tallied = PushlineMetricsFactory(registry: PrometheusCollectorRegistry())
        let apps = [App(), App()]
        let outcomes: [(app: Int, status: Int, reason: String)] = [
            (0, 410, "Unregistered"), (0, 410, "Unregistered"), (0, 0, "expired"), (1, 0, "expired"),
            (1, 0, "expired"), (1, 0, "expired"), (0, 410, "Unregistered"), (0, 400, "BadDeviceToken"),
            (1, 400, "BadDeviceToken"), (1, 400, "BadDeviceToken"), (0, 410, "ExpiredToken"),
        ]
        func counter(_ factory: PushlineMetricsFactory, _ outcome: (app: Int, status: Int, reason: String)) -> CoreMetrics.Counter {
            CoreMetrics.Counter(
                label: "pushline_notifications_total",
                dimensions: [("app", "app\(outcome.app)"), ("status", String(outcome.status)), ("reason", outcome.reason)],
                factory: factory
            )
        }
        var tally = OutcomeMetricsTally()
        var lookups = 0
        for (index, outcome) in outcomes.enumerated() {
            counter(direct, outcome).increment()
            tally.other(app: ObjectIdentifier(apps[outcome.app]), status: outcome.status, reason: outcome.reason) {
                lookups += 1
                return counter(tallied, outcome)
            }
            if index == 4 {
                // Nothing counted since the run began shows until it ends.
                #expect(Self.lines(tallied) != Self.lines(direct))
                tally.flush()
            }
        }
        tally.flush()
        #expect(Self.lines(tallied) == Self.lines(direct))
        // One lookup per change of outcome; a flush keeps the last counter.
        #expect(lookups == 7)
        tally.flush()
        #expect(Self.lines(tallied) == Self.lines(direct))
    }

    /// The exposition's lines, sorted: the registries list the same series in the order each
    /// first saw them.
    static func lines(_ factory: PushlineMetricsFactory) -> [Substring] {
        String(decoding: factory.exposition(), as: UTF8.self).split(separator: "\n").sorted()
    }
}
