/// Per-notification limits the caller knows and the client honours.
public struct APNSSendOptions: Sendable, Hashable {
    /// Not sent at all after this (the job's `deadline`): the outcome is `expired`.
    public var deadline: ContinuousClock.Instant?
    /// No retry starts after this (the earlier of the job's deadline and `apns-expiration`).
    public var retryUntil: ContinuousClock.Instant?

    public init(deadline: ContinuousClock.Instant? = nil, retryUntil: ContinuousClock.Instant? = nil) {
        self.deadline = deadline
        self.retryUntil = retryUntil
    }
}
