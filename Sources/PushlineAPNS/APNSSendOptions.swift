import PushlineAPNSCore

/// Per-notification limits the caller knows and the client honours.
public struct APNSSendOptions: Sendable, Hashable {
    /// Not sent at all after this (the job's `deadline`): the outcome is `expired`.
    public var deadline: MonotonicInstant?
    /// No retry starts after this (the earlier of the job's deadline and `apns-expiration`).
    public var retryUntil: MonotonicInstant?
    /// Urgent requests go ahead of bulk ones in the pool's queue.
    public var lane: SendLane

    public init(deadline: MonotonicInstant? = nil, retryUntil: MonotonicInstant? = nil, lane: SendLane = .bulk) {
        self.deadline = deadline
        self.retryUntil = retryUntil
        self.lane = lane
    }
}
