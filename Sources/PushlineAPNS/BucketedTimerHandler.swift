import Metrics

/// A timer handler that keeps a histogram's buckets and can take many values at once: values
/// counted in place (`TimerTally`) are added with one call, one atomic add per bucket, instead of
/// a record per value. The worker's Prometheus timers are (`AtomicTimerHistogram`).
public protocol BucketedTimerHandler: TimerHandler, AnyObject {
    /// How many buckets a tally of this histogram holds.
    var bucketCount: Int { get }
    /// The bucket of a value.
    func bucket(of nanoseconds: Int64) -> Int
    /// Adds values counted elsewhere: `counts[i]` values in bucket `i`, summing to `sumNanoseconds`.
    func add(counts: UnsafeBufferPointer<Int>, sumNanoseconds: Int64)
}
