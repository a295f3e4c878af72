/// A partition of a topic: the unit of assignment, pausing and offset storage.
public struct TopicPartition: Sendable, Hashable, CustomStringConvertible {
    public var topic: String
    public var partition: Int32

    public init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }

    public var description: String { "\(topic)[\(partition)]" }

    /// The partition and the name's length, not the name's bytes: a consumer has a topic or two,
    /// so that tells its partitions apart as well, and the consumer looks a record's partition up
    /// three times per record (taken, started, completed). Equal values hash alike, as they must.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(partition)
        hasher.combine(topic.utf8.count)
    }
}
