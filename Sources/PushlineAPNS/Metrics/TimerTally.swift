/// Values of one timer counted in place and recorded together (`flush()`): a run of outcomes, or
/// a connection's read batch of answers, records its durations with one atomic add per bucket
/// they fall in, instead of two atomic adds per value on counters every event-loop thread
/// shares. A value for another timer records what was counted first.
///
/// One thread's. The bounds and counts are this object's own memory, so a value costs a binary
/// search and an add: no reference counting, no call into the histogram.
public final class TimerTally {
    /// The timer counted for; held, so its identity is not reused while counted for.
    private var timer: HistogramTimer?
    private var timerID: ObjectIdentifier?
    /// The histogram's bounds (`boundCount`), then one counter per bucket (`boundCount + 1`).
    private var bounds: UnsafeMutablePointer<Int64>
    private var counts: UnsafeMutablePointer<Int>
    private var boundCount = 0
    private var capacity: Int
    private var sum: Int64 = 0
    private var recorded = 0

    /// Room for the bounds of the first histogram counted for is made then (`start`).
    public init() {
        capacity = 0
        bounds = .allocate(capacity: 0)
        counts = .allocate(capacity: 1)
    }

    deinit {
        bounds.deallocate()
        counts.deallocate()
    }

    public func record(_ nanoseconds: Int64, in timer: HistogramTimer) {
        if ObjectIdentifier(timer) != timerID {
            guard let histogram = timer.histogram else {
                timer.recordNanoseconds(nanoseconds)
                return
            }
            start(timer, histogram)
        }
        counts[HistogramBuckets.index(of: nanoseconds, in: UnsafeBufferPointer(start: bounds, count: boundCount))] += 1
        sum &+= nanoseconds
        recorded += 1
    }

    /// Records what was counted.
    public func flush() {
        guard recorded > 0, let histogram = timer?.histogram else { return }
        histogram.add(counts: UnsafeBufferPointer(start: counts, count: boundCount + 1), sumNanoseconds: sum)
        counts.update(repeating: 0, count: boundCount + 1)
        sum = 0
        recorded = 0
    }

    /// Counts for `timer` from now on, after recording what was counted for the last.
    private func start(_ timer: HistogramTimer, _ histogram: any BucketedTimerHandler) {
        flush()
        let newBounds = histogram.bucketBounds
        if newBounds.count > capacity {
            bounds.deallocate()
            counts.deallocate()
            capacity = newBounds.count
            bounds = .allocate(capacity: capacity)
            counts = .allocate(capacity: capacity + 1)
        }
        boundCount = newBounds.count
        newBounds.withUnsafeBufferPointer { bounds.update(from: $0.baseAddress!, count: boundCount) }
        counts.update(repeating: 0, count: boundCount + 1)
        self.timer = timer
        timerID = ObjectIdentifier(timer)
    }
}
