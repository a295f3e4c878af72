import Metrics

/// A timer handler that keeps a histogram's buckets and can take many values at once: values
/// counted in place (`TimerTally`) are added with one call, one atomic add per bucket, instead of
/// a record per value. The worker's Prometheus timers are (`AtomicTimerHistogram`).
public protocol BucketedTimerHandler: TimerHandler, AnyObject {
    /// The buckets' upper bounds in nanoseconds, ascending, each inclusive; one more bucket takes
    /// the values above the last.
    var bucketBounds: [Int64] { get }
    /// Adds values counted elsewhere: `counts[i]` values in bucket `i` (`bucketBounds.count + 1`
    /// of them), summing to `sumNanoseconds`.
    func add(counts: UnsafeBufferPointer<Int>, sumNanoseconds: Int64)
}
