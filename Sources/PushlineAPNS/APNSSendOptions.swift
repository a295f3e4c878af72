/// Per-notification limits the caller knows and the client honours.
public struct APNSSendOptions: Sendable, Hashable {
    /// Not sent at all after this (the job's `deadline`): the outcome is `expired`.
    public var deadline: ContinuousClock.Instant?
    /// No retry starts after this (the earlier of the job's deadline and `apns-expiration`).
    public var retryUntil: ContinuousClock.Instant?
    /// Urgent requests go ahead of bulk ones in the pool's queue.
    public var lane: SendLane

    public init(deadline: ContinuousClock.Instant? = nil, retryUntil: ContinuousClock.Instant? = nil, lane: SendLane = .bulk) {
        self.deadline = deadline
        self.retryUntil = retryUntil
        self.lane = lane
    }
}
