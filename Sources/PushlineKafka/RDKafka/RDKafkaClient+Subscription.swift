import CRdKafka
import Logging

extension RDKafkaClient {
    /// Creates a consumer; every bad property is reported at once.
    static func makeConsumer(
        properties: [String: String],
        logger: Logger,
        onStatistics: (@Sendable (String) -> Void)?
    ) throws(KafkaError) -> RDKafkaClient {
        try make(type: RD_KAFKA_CONSUMER, properties: properties, logger: logger, onStatistics: onStatistics)
    }

    /// Routes the main queue to the consumer queue: one poll call serves records, rebalances,
    /// logs, errors and statistics.
    func pollSetConsumer() {
        rd_kafka_poll_set_consumer(handle)
    }

    /// Subscribes the consumer to `topics` (every partition of each, assigned by the group).
    func subscribe(topics: [String]) throws(KafkaError) {
        let subscription = RDKafkaTopicPartitionList(
            topics.map { TopicPartition(topic: $0, partition: RD_KAFKA_PARTITION_UA) }
        )
        let err = subscription.withPointer { rd_kafka_subscribe(handle, $0) }
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else {
            throw KafkaError(err, message: "cannot subscribe to \(topics): \(String(cString: rd_kafka_err2str(err)))")
        }
    }

    /// The group's committed offset of each of `partitions` (negative: none), asked of the group
    /// coordinator; blocks up to `timeout`.
    func committed(_ partitions: [TopicPartition], timeout: Duration) throws(KafkaError) -> [(TopicPartition, Int64)] {
        let list = RDKafkaTopicPartitionList(partitions)
        // Filled in place; the list stays ours.
        let err = list.withPointer { rd_kafka_committed(handle, $0, Int32(clamping: timeout.milliseconds)) }
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else {
            throw KafkaError(err, message: "cannot fetch committed offsets: \(String(cString: rd_kafka_err2str(err)))")
        }
        return RDKafkaTopicPartitionList.elements(of: list.pointer).map { ($0.partition, $0.offset) }
    }
}
