/// What the consumer's memory of lost partitions did since it started (`LostPartition`): records
/// fetched again and skipped because their results were in Kafka already, records handed out
/// again to be done only in part, and memories forgotten (another member committed, the offsets
/// moved, or the partition did not come back in time).
public struct LostWorkCounts: Sendable, Hashable {
    public var skipped: Int
    public var resumed: Int
    public var forgotten: Int

    public init(skipped: Int = 0, resumed: Int = 0, forgotten: Int = 0) {
        self.skipped = skipped
        self.resumed = resumed
        self.forgotten = forgotten
    }
}
