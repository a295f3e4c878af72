import PushlineAPNSCore

/// Per-notification limits the caller knows and the client honours.
public struct APNSSendOptions: Sendable, Hashable {
    /// Not sent at all after this (the job's `deadline`): the outcome is `expired`.
    public var deadline: MonotonicInstant?
    /// No retry starts after this (the earlier of the job's deadline and `apns-expiration`).
    public var retryUntil: MonotonicInstant?
    /// Urgent requests go ahead of bulk ones in the pool's queue.
    public var lane: SendLane
    /// The caller's name for the work these requests belong to, for `APNSClient.withdraw(groups:)`
    /// (the worker: the Kafka assignment generation of the job's partition); nil: never withdrawn.
    public var group: UInt64?

    public init(
        deadline: MonotonicInstant? = nil,
        retryUntil: MonotonicInstant? = nil,
        lane: SendLane = .bulk,
        group: UInt64? = nil
    ) {
        self.deadline = deadline
        self.retryUntil = retryUntil
        self.lane = lane
        self.group = group
    }
}
