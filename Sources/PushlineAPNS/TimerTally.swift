/// Values of one timer counted in place and recorded together (`flush()`): a run of outcomes, or
/// a connection's read batch of answers, records its durations with one atomic add per bucket
/// they fall in, instead of two atomic adds per value on counters every event-loop thread
/// shares. A value for another timer records what was counted first. One thread's.
public struct TimerTally {
    /// The timer counted for; held, which keeps `histogram` alive.
    private var timer: HistogramTimer?
    private var timerID: ObjectIdentifier?
    /// `timer`'s histogram, reached without a retain per value.
    private unowned(unsafe) var histogram: (any BucketedTimerHandler)?
    /// Values per bucket of `histogram`, their sum, and how many.
    private var counts: [Int] = []
    private var sum: Int64 = 0
    private var recorded = 0

    public init() {}

    public mutating func record(_ nanoseconds: Int64, in timer: HistogramTimer) {
        if ObjectIdentifier(timer) != timerID {
            guard let histogram = timer.histogram else {
                timer.recordNanoseconds(nanoseconds)
                return
            }
            flush()
            self.timer = timer
            timerID = ObjectIdentifier(timer)
            self.histogram = histogram
            counts.removeAll(keepingCapacity: true)
            counts.append(contentsOf: repeatElement(0, count: histogram.bucketCount))
        }
        counts[histogram.unsafelyUnwrapped.bucket(of: nanoseconds)] += 1
        sum &+= nanoseconds
        recorded += 1
    }

    /// Records what was counted.
    public mutating func flush() {
        guard recorded > 0, let histogram else { return }
        counts.withUnsafeBufferPointer { histogram.add(counts: $0, sumNanoseconds: sum) }
        for index in counts.indices { counts[index] = 0 }
        sum = 0
        recorded = 0
    }
}
