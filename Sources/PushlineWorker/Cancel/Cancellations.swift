import Logging
import PushlineAPNS
import Synchronization

/// What is cancelled in this worker: the one registry the control topic's reader feeds
/// (`apply`) and the pipeline asks (`isCancelled`), made once by the worker.
///
/// Its state is a `CancelState` under a lock; an atomic count of cancelled targets lets the
/// common case (nothing cancelled) answer without the lock. Each change that cancels something
/// bumps `epoch` after the state changed and then runs the sweeps registered with `onCancel`
/// (each app's pool, the parked jobs), outside the lock: the intake reads `epoch` before it checks
/// its jobs and again after it handed them to the pools, and sweeps again when it moved
/// (`sweepIfChanged`), so a job checked just before a cancel and handed over just after is
/// caught too.
///
/// Explicitly synchronised: state under a mutex, counts atomic, sweeps under a mutex (read
/// there, called outside it).
final class Cancellations: Sendable {
    private let state = Mutex(CancelState())
    /// Targets cancelled (some may have expired but not been dropped yet): 0 answers at once.
    private let active = Atomic<Int>(0)
    /// Bumped by every change that cancels something, after the state changed.
    private let changes = Atomic<UInt64>(0)
    private let sweeps = Mutex<[@Sendable () -> Void]>([])
    private let wallClockMilliseconds: @Sendable () -> Int64
    private let logger: Logger

    init(logger: Logger, wallClockMilliseconds: @escaping @Sendable () -> Int64 = WallClock.milliseconds) {
        self.logger = logger
        self.wallClockMilliseconds = wallClockMilliseconds
    }

    /// One change read from the control topic: applied, logged (one line per cancel and per
    /// lift), and, for a cancel, every registered sweep runs before this returns.
    func apply(_ change: CancelChange) {
        let now = wallClockMilliseconds()
        let applied = state.withLock { state in
            defer { active.store(state.count, ordering: .sequentiallyConsistent) }
            return state.apply(change, now: now)
        }
        log(change, applied, now: now)
        guard case .cancelled = applied else { return }
        changes.add(1, ordering: .sequentiallyConsistent)
        sweep()
    }

    /// Whether `job` is cancelled now (by its campaign or its id). Without a cancel: one atomic
    /// load, no lock.
    func isCancelled(_ job: Job) -> Bool {
        guard active.load(ordering: .sequentiallyConsistent) > 0 else { return false }
        return isCancelled(campaign: job.campaign, jobID: job.id)
    }

    /// Whether the job a request's observer names is cancelled now (`APNSCancelFilter`).
    func isCancelled(_ key: APNSCancelKey) -> Bool {
        guard active.load(ordering: .sequentiallyConsistent) > 0 else { return false }
        return isCancelled(campaign: key.campaign, jobID: key.job)
    }

    /// Whether any target is cancelled (some of them may have expired): false means no job is.
    var any: Bool { active.load(ordering: .sequentiallyConsistent) > 0 }

    private func isCancelled(campaign: String?, jobID: String) -> Bool {
        let now = wallClockMilliseconds()
        return state.withLock { state in
            if !state.dropExpired(now: now).isEmpty { active.store(state.count, ordering: .sequentiallyConsistent) }
            return state.isCancelled(campaign: campaign, jobID: jobID, now: now)
        }
    }

    /// How many changes cancelled something so far: read before checking jobs, and given to
    /// `sweepIfChanged` once they are handed over.
    var epoch: UInt64 { changes.load(ordering: .sequentiallyConsistent) }

    /// Runs the sweeps again when a cancel was applied since `epoch` was read (the jobs checked
    /// then may have reached the pools after that cancel's sweep).
    func sweepIfChanged(since epoch: UInt64) {
        guard changes.load(ordering: .sequentiallyConsistent) != epoch else { return }
        sweep()
    }

    /// Registers what runs after each cancel (the pipeline's sweep of its pools and parked jobs).
    func onCancel(_ sweep: @escaping @Sendable () -> Void) {
        sweeps.withLock { $0.append(sweep) }
    }

    private func sweep() {
        for sweep in sweeps.withLock({ $0 }) { sweep() }
    }

    private func log(_ change: CancelChange, _ applied: CancelState.Applied, now: Int64) {
        switch change {
        case .cancel(let target, let reason, let writtenAt, let expiresAt):
            logger.info(
                applied == .expired ? "cancel seen, already expired: ignored" : "cancel seen",
                metadata: [
                    "target": "\(target.key)",
                    "reason": "\(reason ?? "-")",
                    "written_at_ms": "\(writtenAt)",
                    "seen_after_ms": "\(now - writtenAt)",
                    "expires_at_ms": "\(expiresAt)",
                ]
            )
        case .lift(let target):
            logger.info(
                "cancel lifted",
                metadata: ["target": "\(target.key)", "was_cancelled": "\(applied == .lifted(wasCancelled: true))"]
            )
        }
    }
}
