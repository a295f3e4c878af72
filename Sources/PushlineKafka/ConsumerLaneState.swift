/// A lane's buffer and fetch state in the consumer machine.
struct ConsumerLaneState: Sendable {
    /// Records handed to the reader and not yet read.
    var buffered = 0
    /// Since when the buffer has been full (a pause comes only after `fullPauseAfter`).
    var fullSince: ContinuousClock.Instant?
    /// Whether the lane's partitions are paused at librdkafka.
    var fetchPaused = false

    /// Notes whether the buffer is full at `now`; true when it has been full for `pauseAfter`.
    mutating func observe(full: Bool, now: ContinuousClock.Instant, pauseAfter: Duration) -> Bool {
        guard full else {
            fullSince = nil
            return false
        }
        let since = fullSince ?? now
        fullSince = since
        return now - since >= pauseAfter
    }
}
