import Metrics

/// A swift-metrics `Timer` with its handler kept in reach: when the handler keeps buckets
/// (`BucketedTimerHandler`, as the worker's do), a run of values can be counted in place and
/// recorded with one atomic add per bucket (`TimerTally`) instead of two per value.
public final class HistogramTimer: Sendable {
    public let timer: Timer
    /// The handler, when it keeps buckets (nil under another metrics backend).
    public let histogram: (any BucketedTimerHandler)?

    public init(label: String, dimensions: [(String, String)], factory: any MetricsFactory = MetricsSystem.factory) {
        let handler = factory.makeTimer(label: label, dimensions: dimensions)
        handler.preferDisplayUnit(.seconds)
        timer = Timer(label: label, dimensions: dimensions, handler: handler, factory: factory)
        histogram = handler as? any BucketedTimerHandler
    }

    public func recordNanoseconds(_ duration: Int64) {
        timer.recordNanoseconds(duration)
    }
}
