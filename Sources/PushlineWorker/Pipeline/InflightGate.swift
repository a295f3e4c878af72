import PushlineAPNS

/// Bounds the notifications in flight: the intake waits while the count is at `limit`
/// (`waitForRoom`), and, once it has paused the partitions, until releases bring the count down
/// to `lowWater` (`waitForLowWater`), so the backlog stays in Kafka, not in memory.
///
/// Every token of every job passes `add` and `release`, from the intake and from the producer's
/// delivery thread; both are atomics, and a release takes a lock only to wake a waiting intake.
/// Waits end early, returning false, when the waiting task is cancelled (shutdown).
///
/// Lanes: urgent notifications count in the total, so bulk intake yields to them, but they wait
/// only for room among urgent ones (`waitForUrgentRoom`), never behind bulk work. The urgent lane
/// can therefore take the total up to twice `limit`.
final class InflightGate: Sendable {
    let limit: Int
    let lowWater: Int
    private let inflight = WaitableCount()
    private let urgent = WaitableCount()

    init(limit: Int, lowWaterFraction: Double = 0.75) {
        self.limit = max(1, limit)
        self.lowWater = max(0, Int(Double(max(1, limit)) * lowWaterFraction))
    }

    var count: Int { inflight.value }

    /// Whether a new job would have to wait.
    var isFull: Bool { count >= limit }

    /// Adds `n` in-flight notifications (a job's tokens are admitted whole, so one job may take
    /// the count past `limit` by at most its own size).
    func add(_ n: Int, lane: SendLane = .bulk) {
        if lane == .urgent { urgent.add(n) }
        inflight.add(n)
    }

    func release(_ n: Int, lane: SendLane = .bulk) {
        if lane == .urgent { urgent.subtract(n) }
        inflight.subtract(n)
    }

    /// Urgent notifications in flight (also counted in `count`).
    var urgentCount: Int { urgent.value }

    /// Waits until urgent notifications in flight are below `limit` (bulk ones do not count);
    /// false when cancelled first.
    func waitForUrgentRoom() async -> Bool {
        guard urgent.value >= limit else { return true }
        return await urgent.wait(atMost: limit - 1)
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
