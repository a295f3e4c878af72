/// What is cancelled, as a value: each cancelled target (`CancelTarget`) with its cancel's
/// details, and the earliest expiry among them. Pure: the wall-clock time is an argument, and
/// `Cancellations` holds it under a lock.
///
/// A cancel whose `expiresAtMilliseconds` is past is no cancel: it is never reported as one, and
/// it is dropped at the next `apply` or `dropExpired` (which `Cancellations` calls before each
/// question).
struct CancelState: Sendable {
    /// One target's cancel, as its latest control record said.
    struct Entry: Sendable, Hashable {
        var reason: String?
        var writtenAtMilliseconds: Int64
        var expiresAtMilliseconds: Int64
    }

    /// What `apply` did.
    enum Applied: Sendable, Hashable {
        /// The target is cancelled now (`renewed`: it was already, and its entry was replaced).
        case cancelled(renewed: Bool)
        /// A cancel already past its expiry: nothing is cancelled (an earlier cancel of the
        /// target, if any, is lifted with it).
        case expired
        /// The target is no longer cancelled (`wasCancelled`: it was).
        case lifted(wasCancelled: Bool)
    }

    private(set) var entries: [CancelTarget: Entry] = [:]
    /// The earliest `expiresAtMilliseconds` among `entries` (nil when empty): until then, no
    /// entry needs looking at for expiry.
    private var earliestExpiry: Int64?

    /// Targets cancelled (some may have expired since `now` was last given).
    var count: Int { entries.count }

    /// Applies one change read from the control topic at wall-clock `now`.
    mutating func apply(_ change: CancelChange, now: Int64) -> Applied {
        dropExpired(now: now)
        switch change {
        case .cancel(let target, let reason, let writtenAt, let expiresAt):
            guard expiresAt > now else {
                entries[target] = nil
                recomputeEarliest()
                return .expired
            }
            let renewed =
                entries.updateValue(
                    Entry(reason: reason, writtenAtMilliseconds: writtenAt, expiresAtMilliseconds: expiresAt),
                    forKey: target
                ) != nil
            recomputeEarliest()
            return .cancelled(renewed: renewed)
        case .lift(let target):
            let was = entries.removeValue(forKey: target) != nil
            if was { recomputeEarliest() }
            return .lifted(wasCancelled: was)
        }
    }

    /// Whether a job of `campaign` (nil: none) with id `jobID` is cancelled at `now`: its
    /// campaign or its id is, by a cancel that has not expired.
    func isCancelled(campaign: String?, jobID: String, now: Int64) -> Bool {
        guard !entries.isEmpty else { return false }
        if let campaign, entry(.campaign(campaign), now: now) != nil { return true }
        return entry(.job(jobID), now: now) != nil
    }

    /// The entry of `target`, if it is cancelled at `now`.
    func entry(_ target: CancelTarget, now: Int64) -> Entry? {
        guard let entry = entries[target], entry.expiresAtMilliseconds > now else { return nil }
        return entry
    }

    /// Forgets every cancel past its expiry at `now`; returns the targets forgotten.
    @discardableResult
    mutating func dropExpired(now: Int64) -> [CancelTarget] {
        guard let earliestExpiry, earliestExpiry <= now else { return [] }
        let expired = entries.filter { $0.value.expiresAtMilliseconds <= now }.map(\.key)
        for target in expired { entries[target] = nil }
        recomputeEarliest()
        return expired
    }

    private mutating func recomputeEarliest() {
        earliestExpiry = entries.values.map(\.expiresAtMilliseconds).min()
    }
}
