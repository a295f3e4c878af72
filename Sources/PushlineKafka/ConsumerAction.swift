/// What the consumer machine asks its executor (`ConsumerCore`, on the poll thread) to do, in
/// order. Every action is a librdkafka call or an event for the consumer's reader.
enum ConsumerAction: Sendable {
    /// Pause or resume fetching on these partitions of `lane` (nil: both lanes).
    case setFetchPaused(Bool, [TopicPartition], lane: ConsumerLane?)
    /// Store these offsets (the next offset to read, per partition) for the next commit.
    case storeOffsets([(TopicPartition, Int64)])
    /// Commit these offsets: in the background (the result comes back as `committed`), or at once,
    /// waiting for the broker (revokes and close), with what it confirmed passed to `committed`.
    case commit([(TopicPartition, Int64)], wait: Bool)
    /// Give up this member's join and join afresh (`StalledJoin`): cut the broker connections.
    case rejoin(pendingFor: Duration, rejoins: Int)
    /// Take these partitions: `incremental` for the cooperative protocols.
    case assign([TopicPartition], incremental: Bool)
    /// Route the fetched records of these (bulk) partitions into the bulk queue.
    case routeToBulkQueue([TopicPartition])
    /// Give up these partitions (eager: the whole assignment).
    case unassign([TopicPartition], incremental: Bool)
    /// Tell the partitions' owner that their revoke began or gives up on started records.
    case notifyRevoke(RevokeNotice)
    /// Tell the reader the member now also owns these partitions.
    case announceAssigned([TopicPartition])
    /// Tell the reader the member no longer owns these partitions.
    case announceRevoked([TopicPartition])
}
