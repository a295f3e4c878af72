/// Where a value falls among a histogram's bucket bounds: shared by the worker's histograms
/// (`AtomicTimerHistogram`, one value at a time) and the tallies that count values in place
/// (`TimerTally`), so both put a value in the same bucket.
public enum HistogramBuckets {
    /// The bucket of `value` among ascending, upper-inclusive `bounds` (Prometheus's): the index
    /// of the first bound at or above it, or `bounds.count` when it is above every bound.
    @inlinable
    public static func index(of value: Int64, in bounds: UnsafeBufferPointer<Int64>) -> Int {
        var low = 0
        var high = bounds.count
        while low < high {
            let middle = (low + high) / 2
            if bounds[middle] >= value { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
