/// A rebalance as librdkafka hands it to the consumer, in Swift values.
struct RDKafkaRebalance: Sendable {
    enum Kind: Sendable {
        /// The group added `partitions` to this member's assignment.
        case assign
        /// `partitions` are taken away; `lost` when the session timed out and they may already
        /// be another member's.
        case revoke(lost: Bool)
        /// librdkafka reports an error instead of an assignment.
        case failed(KafkaError)
    }

    var kind: Kind
    var partitions: [TopicPartition]
    /// True for COOPERATIVE, false for EAGER; nil when librdkafka cannot say (no group yet).
    var cooperative: Bool?
}
