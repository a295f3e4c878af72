import PushlineAPNS
import Synchronization

/// The one count of the work in flight: the jobs handed to the pipeline and not yet done with
/// (their records not all acknowledged, or given up), and their notifications. Admission, the
/// shutdown drain, the metrics and the uncommitted-work gauge all read it; nothing else counts.
///
/// It bounds the notifications: the intake waits while the count is at `limit`, until there is
/// room for a `quantum` of them (`waitForRoom`), and, once it has paused the partitions, until
/// releases bring the count down to `lowWater` (`waitForLowWater`), so the backlog stays in
/// Kafka, not in memory.
///
/// A job passes `jobsStarted` (its record arrived), `add` (its notifications, once decoded) and
/// `jobEnded` (everything it published is acknowledged, or it was given up), from the intake and
/// from the producer's delivery thread: atomics, one set per intake run and per job group (or
/// job), and a lock only to wake a waiting task.
/// Waits end early, returning false, when the waiting task is cancelled (shutdown).
///
/// Lanes: urgent notifications count in the total, so bulk intake yields to them, but they wait
/// only for room among urgent ones (`waitForUrgentRoom`, up to `maximum`), never behind bulk work.
/// The urgent lane can therefore take the total up to twice `maximum`.
///
/// The limit moves: `setLimit` applies the adaptive window (`AdaptiveWindow`), never above
/// `maximum` (`worker.max_inflight`), which also bounds the urgent lane.
///
/// Apps: in a worker with several apps, each app's part of the count (`AppLoad.inflight`) moves
/// here and nowhere else, with the total: `add` and `jobEnded` take the job's app (nil in a worker
/// with one app), so the parts always sum to the total.
final class InflightGate: Sendable {
    let maximum: Int
    private let lowWaterFraction: Double
    private let currentLimit: Atomic<Int>
    private let inflight = WaitableCount()
    private let urgent = WaitableCount()
    private let released = Atomic<Int>(0)

    /// Notifications released since the start: the window controller's rate measure.
    var releasedTotal: Int { released.load(ordering: .relaxed) }

    init(limit: Int, lowWaterFraction: Double = 0.75) {
        self.maximum = max(1, limit)
        self.lowWaterFraction = lowWaterFraction
        self.currentLimit = Atomic(max(1, limit))
    }

    /// The bulk intake's limit now.
    var limit: Int { currentLimit.load(ordering: .relaxed) }

    var lowWater: Int { max(0, Int(Double(limit) * lowWaterFraction)) }

    /// How much room a full gate waits for before the intake goes on: 1/16 of the limit (at most
    /// 1,024, at least 1). At the limit notifications leave one by one; admitting each freed one
    /// at once would make every intake run one job long, with a wait, a consumer lock and a pool
    /// hand-over each. Waiting for a quantum makes the runs that long instead, and costs nothing
    /// in throughput: the gate still holds at least `limit - quantum` in flight.
    var quantum: Int { max(1, min(limit / 16, 1024)) }

    /// A new limit, within 1...`maximum`. A raise is seen by the next admission; an intake
    /// already waiting wakes at the next release.
    func setLimit(_ limit: Int) {
        currentLimit.store(min(maximum, max(1, limit)), ordering: .relaxed)
    }

    var count: Int { inflight.value }

    /// Whether a new job would have to wait.
    var isFull: Bool { count >= limit }

    /// Jobs in flight (the shutdown drain waits for none).
    let jobs = WaitableCount()

    /// `count` job records reached the pipeline (an intake run's, counted once for the run).
    func jobsStarted(_ count: Int) {
        jobs.add(count)
    }

    /// A job is done with (or `jobs` of them, together, all of `app`): its `notifications` leave
    /// the count with it (0 for a rejected record), and its app's part.
    func jobEnded(notifications: Int, lane: SendLane = .bulk, jobs ended: Int = 1, app: AppLoad? = nil) {
        if notifications > 0 { release(notifications, lane: lane, app: app) }
        if ended > 0 { jobs.subtract(ended) }
    }

    /// Adds `n` in-flight notifications (a job's tokens are admitted whole, so one job may take
    /// the count past `limit` by at most its own size), of `app` when the worker has several.
    func add(_ n: Int, lane: SendLane = .bulk, app: AppLoad? = nil) {
        if lane == .urgent { urgent.add(n) }
        app?.inflight.add(n)
        inflight.add(n)
    }

    /// Adds `n` notifications of `app` to its part only: their total was added for the whole run
    /// (`add` without an app), once.
    func addAppPart(_ n: Int, app: AppLoad) {
        app.inflight.add(n)
    }

    func release(_ n: Int, lane: SendLane = .bulk, app: AppLoad? = nil) {
        if lane == .urgent { urgent.subtract(n) }
        app?.inflight.subtract(n)
        inflight.subtract(n)
        released.wrappingAdd(n, ordering: .relaxed)
    }

    /// Urgent notifications in flight (also counted in `count`).
    var urgentCount: Int { urgent.value }

    /// Waits until urgent notifications in flight are below `limit` (bulk ones do not count);
    /// false when cancelled first.
    func waitForUrgentRoom() async -> Bool {
        guard urgent.value >= maximum else { return true }
        return await urgent.wait(atMost: maximum - 1)
    }

    /// Tasks waiting in `waitForRoom` or `waitForLowWater`.
    var waitingForRoom: Int { inflight.parkedWaiters }

    /// Waits until there is room for a `quantum` of notifications; false when cancelled first.
    func waitForRoom() async -> Bool {
        await inflight.wait(atMost: limit - quantum)
    }

    /// `waitForRoom()`, for at most `patience`: false when it ran out or the task was cancelled.
    func waitForRoom(within patience: Duration) async -> Bool {
        await inflight.wait(atMost: limit - quantum, within: patience)
    }

    /// Waits until the count is down to `lowWater`; false when cancelled first.
    func waitForLowWater() async -> Bool {
        await inflight.wait(atMost: lowWater)
    }
}
