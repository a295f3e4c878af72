import CoreMetrics

/// A swift-metrics `Timer` with its handler kept in reach: when the handler is the worker's
/// `AtomicTimerHistogram`, a run of values can be counted in place and recorded with one atomic
/// add per bucket (`TimerTally`) instead of two per value.
final class HistogramTimer: Sendable {
    let timer: Timer
    /// The handler, when it is the worker's histogram (nil under another metrics backend).
    let histogram: AtomicTimerHistogram?

    init(label: String, dimensions: [(String, String)], factory: any MetricsFactory = MetricsSystem.factory) {
        let handler = factory.makeTimer(label: label, dimensions: dimensions)
        handler.preferDisplayUnit(.seconds)
        timer = Timer(label: label, dimensions: dimensions, handler: handler, factory: factory)
        histogram = handler as? AtomicTimerHistogram
    }

    func recordNanoseconds(_ duration: Int64) {
        timer.recordNanoseconds(duration)
    }
}
