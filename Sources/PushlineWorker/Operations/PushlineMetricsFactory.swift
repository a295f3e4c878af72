import CoreMetrics
import Prometheus
import Synchronization

/// The worker's swift-metrics backend: swift-prometheus for counters, gauges, meters and
/// recorders; `AtomicTimerHistogram` for timers, which the hot path records several times per
/// notification. `exposition()` is the whole `/metrics` body: the registry's families, then the
/// timers' (same names, labels and bucket bounds as swift-prometheus would give them).
public final class PushlineMetricsFactory: MetricsFactory, Sendable {
    public let registry: PrometheusCollectorRegistry
    private let prometheus: PrometheusMetricsFactory
    /// Timer families by name, each with its series by labels, in creation order.
    private let timers = Mutex<[(name: String, series: [AtomicTimerHistogram])]>([])

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        self.prometheus = PrometheusMetricsFactory(registry: registry)
    }

    /// The `/metrics` body.
    public func exposition() -> [UInt8] {
        var buffer = registry.emitToBuffer()
        let families = timers.withLock { $0 }
        for family in families where !family.series.isEmpty {
            buffer.append(contentsOf: "# TYPE \(family.name) histogram\n".utf8)
            for series in family.series { series.emit(into: &buffer) }
        }
        return buffer
    }

    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        let buckets = prometheus.durationHistogramBuckets[label] ?? prometheus.defaultDurationHistogramBuckets
        return timers.withLock { families in
            let familyIndex: Int
            if let index = families.firstIndex(where: { $0.name == label }) {
                familyIndex = index
            } else {
                families.append((label, []))
                familyIndex = families.count - 1
            }
            // The same name and labels is the same series, as in the registry.
            if let existing = families[familyIndex].series.first(where: { Self.sameLabels($0.labels, dimensions) }) {
                return existing
            }
            let histogram = AtomicTimerHistogram(name: label, labels: dimensions, buckets: buckets)
            families[familyIndex].series.append(histogram)
            return histogram
        }
    }

    public func destroyTimer(_ handler: any TimerHandler) {
        guard let histogram = handler as? AtomicTimerHistogram else { return prometheus.destroyTimer(handler) }
        timers.withLock { families in
            guard let familyIndex = families.firstIndex(where: { $0.name == histogram.name }) else { return }
            families[familyIndex].series.removeAll { $0 === histogram }
        }
    }

    private static func sameLabels(_ a: [(String, String)], _ b: [(String, String)]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    }

    // MARK: Everything else: swift-prometheus

    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        prometheus.makeCounter(label: label, dimensions: dimensions)
    }

    public func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        prometheus.makeFloatingPointCounter(label: label, dimensions: dimensions)
    }

    public func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        prometheus.makeMeter(label: label, dimensions: dimensions)
    }

    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        prometheus.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
    }

    public func destroyCounter(_ handler: any CounterHandler) { prometheus.destroyCounter(handler) }

    public func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        prometheus.destroyFloatingPointCounter(handler)
    }

    public func destroyMeter(_ handler: any MeterHandler) { prometheus.destroyMeter(handler) }

    public func destroyRecorder(_ handler: any RecorderHandler) { prometheus.destroyRecorder(handler) }
}
