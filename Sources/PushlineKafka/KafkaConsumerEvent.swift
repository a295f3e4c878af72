/// What the consumer's poll thread delivers through `KafkaConsumer.events`, in order.
public enum KafkaConsumerEvent: Sendable {
    /// Records of assigned partitions, in offset order per partition (up to `maxBatchSize`).
    case records([KafkaRecord])
    /// Partitions added to this member's assignment.
    case assigned([TopicPartition])
    /// Partitions released by this member: their drain is over, what completed was stored and
    /// committed, and completions of their earlier records are now ignored.
    case revoked([TopicPartition])
}
