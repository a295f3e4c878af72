/// Identifies one consumed record for `KafkaConsumer.complete(_:)`.
///
/// `generation` names the assignment the record was delivered under: once its partition is
/// revoked, completions carrying the old generation are ignored even if the partition comes back.
public struct RecordID: Sendable, Hashable, CustomStringConvertible {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
    public var generation: UInt64

    public init(topic: String, partition: Int32, offset: Int64, generation: UInt64) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.generation = generation
    }

    public var topicPartition: TopicPartition { TopicPartition(topic: topic, partition: partition) }

    public var description: String { "\(topic)[\(partition)]@\(offset)" }
}
