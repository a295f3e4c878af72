/// Bounds the notifications in flight: the intake waits while the count is at `limit`
/// (`waitForRoom`), and, once it has paused the partitions, until releases bring the count down
/// to `lowWater` (`waitForLowWater`), so the backlog stays in Kafka, not in memory.
///
/// Every token of every job passes `add` and `release`, from the intake and from the producer's
/// delivery thread; both are atomics, and a release takes a lock only to wake a waiting intake.
/// Waits end early, returning false, when the waiting task is cancelled (shutdown).
final class InflightGate: Sendable {
    let limit: Int
    let lowWater: Int
    private let inflight = WaitableCount()

    init(limit: Int, lowWaterFraction: Double = 0.75) {
        self.limit = max(1, limit)
        self.lowWater = max(0, Int(Double(max(1, limit)) * lowWaterFraction))
    }

    var count: Int { inflight.value }

    /// Whether a new job would have to wait.
    var isFull: Bool { count >= limit }

    /// Adds `n` in-flight notifications (a job's tokens are admitted whole, so one job may take
    /// the count past `limit` by at most its own size).
    func add(_ n: Int) {
        inflight.add(n)
    }

    func release(_ n: Int) {
        inflight.subtract(n)
    }

    /// Waits until the count is below `limit`; false when cancelled first.
    func waitForRoom() async -> Bool {
        await inflight.wait(atMost: limit - 1)
    }

    /// Waits until the count is down to `lowWater`; false when cancelled first.
    func waitForLowWater() async -> Bool {
        await inflight.wait(atMost: lowWater)
    }
}
