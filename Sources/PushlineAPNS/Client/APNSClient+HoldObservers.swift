import Logging
import Synchronization

/// The app's hold as the outside hears of it: the log lines and metric of each transition, and
/// the observers `onHoldChange` registered, told after the pool's lock is released.
extension APNSClient {
    /// Calls `observer` (on any thread) each time the app is held (`true`) or a hold ends
    /// (`false`). The observer is told the change as a value, after the pool's lock is released:
    /// it must not call back into the client (`status()`, a send) from there, since it runs
    /// inside the pool's performing of its decisions.
    public func onHoldChange(_ observer: @escaping @Sendable (_ held: Bool) -> Void) {
        holdObservers.withLock { $0.append(observer) }
    }

    func log(_ transition: AppHealth.Transition) {
        defer {
            let held = if case .held = transition { true } else { false }
            for observer in holdObservers.withLock({ $0 }) { observer(held) }
        }
        switch transition {
        case .held(let hold):
            metrics.held(true)
            logger.error(
                "APNs refuses this app's requests: holding its notifications (they stay queued, probing with backoff)",
                metadata: ["status": "\(hold.status)", "reason": "\(hold.reason)"]
            )
        case .resumed(let after, let failedProbes):
            metrics.held(false)
            logger.notice(
                "APNs accepts this app's requests again: hold ended, sending at full speed",
                metadata: ["held_ms": "\(Int(after.milliseconds))", "failed_probes": "\(failedProbes)"]
            )
        }
    }
}
