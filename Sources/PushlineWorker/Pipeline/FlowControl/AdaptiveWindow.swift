/// How many notifications the worker admits at once, bounded by time rather than count: enough
/// to keep APNs' streams busy plus `target` worth of queue at the measured send rate, never more
/// than `maximum` (`worker.max_inflight`) nor less than `minimum`.
///
///     window = streams in use + rate × (target + allowance)
///
/// BBR-like: `rate` is the highest rate seen over the last `rateMemory` (a max filter, so a
/// moment's stall does not shrink the window, while a lasting slowdown does); the streams in use
/// keep the connections busy whatever the rate estimate; `allowance` covers the time a result
/// waits for Kafka's acknowledgement. Work beyond the window waits in Kafka, not in memory, so a
/// revoke or a shutdown finishes what was admitted in about `target`, and an urgent job queues
/// behind at most that much bulk work.
///
/// Pure value: `sample` is fed the count of notifications finished so far, the streams in use,
/// and the time; it returns the new window. The worker's `WindowController` feeds it every 100 ms.
struct AdaptiveWindow: Sendable {
    var target: Duration
    var maximum: Int
    var minimum: Int
    var allowance: Duration = .milliseconds(50)
    var rateMemory: Duration = .seconds(1)

    /// Per-sample rates (notifications per second) with their time, oldest first.
    private var rates: [(at: ContinuousClock.Instant, rate: Double)] = []
    private var last: (at: ContinuousClock.Instant, finished: Int)?
    private(set) var window: Int

    init(target: Duration, maximum: Int, minimum: Int = 1000) {
        self.target = target
        self.maximum = max(1, maximum)
        self.minimum = max(1, min(minimum, maximum))
        self.window = self.minimum
    }

    /// The send rate the window is sized for (notifications per second).
    var rate: Double { rates.map(\.rate).max() ?? 0 }

    /// A new measurement: `finished` notifications so far (a counter that only grows), and
    /// `streamsInUse` across every pool, at `now`. Returns the new window.
    mutating func sample(finished: Int, streamsInUse: Int, now: ContinuousClock.Instant) -> Int {
        if let last, now > last.at {
            let seconds = Double((now - last.at).components.attoseconds) / 1e18 + Double((now - last.at).components.seconds)
            rates.append((now, Double(max(0, finished - last.finished)) / seconds))
        }
        last = (now, finished)
        while let oldest = rates.first, now - oldest.at > rateMemory {
            rates.removeFirst()
        }
        let seconds = Double((target + allowance).components.seconds) + Double((target + allowance).components.attoseconds) / 1e18
        let wanted = Double(max(0, streamsInUse)) + rate * seconds
        window = min(maximum, max(minimum, Int(wanted.rounded(.up))))
        return window
    }
}
