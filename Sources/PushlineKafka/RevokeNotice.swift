/// What the consumer tells its owner while it revokes partitions, on the poll thread inside the
/// rebalance: the owner can give up work on them that cannot finish in time, so that nothing of
/// theirs is sent after the next owner has them.
public struct RevokeNotice: Sendable, Hashable {
    public enum Stage: Sendable, Hashable {
        /// The revoke began and waits for the partitions' started records (up to
        /// `revokeDrainTimeout`): give up what cannot finish soon.
        case began
        /// The wait is over with records still started (it timed out, or the assignment was lost):
        /// the next owner redoes them, so give up everything of theirs not yet done.
        case givingUp
    }

    public var partitions: [TopicPartition]
    /// The generations the partitions' records were handed out under (`RecordID.generation`).
    public var generations: [UInt64]
    public var stage: Stage

    public init(partitions: [TopicPartition], generations: [UInt64], stage: Stage) {
        self.partitions = partitions
        self.generations = generations
        self.stage = stage
    }
}
