import CRdKafka

/// Owns an `rd_kafka_topic_partition_list_t` built from Swift values; destroyed in deinit.
final class RDKafkaTopicPartitionList {
    let pointer: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>

    /// Runs `body` with the list, which lives at least until `body` returns. Pass lists to
    /// librdkafka this way: Swift may release an object right after its last use, which for
    /// `RDKafkaTopicPartitionList(x).pointer` is before the call that reads the list (a crash in
    /// strlen on a freed topic name, issue 27).
    func withPointer<Result>(_ body: (UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) -> Result) -> Result {
        withExtendedLifetime(self) { body(pointer) }
    }

    init(_ partitions: [TopicPartition]) {
        pointer = rd_kafka_topic_partition_list_new(Int32(max(partitions.count, 1)))
        for topicPartition in partitions {
            rd_kafka_topic_partition_list_add(pointer, topicPartition.topic, topicPartition.partition)
        }
    }

    init(offsets: [(TopicPartition, Int64)]) {
        pointer = rd_kafka_topic_partition_list_new(Int32(max(offsets.count, 1)))
        for (topicPartition, offset) in offsets {
            let element = rd_kafka_topic_partition_list_add(pointer, topicPartition.topic, topicPartition.partition)
            element?.pointee.offset = offset
        }
    }

    /// The partitions of a list librdkafka owns (a `String` per topic name); the list is only read.
    static func partitions(of list: UnsafePointer<rd_kafka_topic_partition_list_t>) -> [TopicPartition] {
        elements(of: list).map(\.partition)
    }

    /// Each element of a list (ours or librdkafka's) with the offset and error librdkafka filled
    /// in (committed offsets, commit results); the list is only read.
    static func elements(
        of list: UnsafePointer<rd_kafka_topic_partition_list_t>
    ) -> [(partition: TopicPartition, offset: Int64, error: rd_kafka_resp_err_t)] {
        let count = Int(list.pointee.cnt)
        guard count > 0, let elements = list.pointee.elems else { return [] }
        return (0..<count).map {
            let element = elements[$0]
            return (TopicPartition(topic: String(cString: element.topic), partition: element.partition), element.offset, element.err)
        }
    }

    /// Per-element errors after a call that fills them in (offsets_store, commit).
    var elementErrors: [(TopicPartition, KafkaError)] {
        Self.elements(of: pointer).compactMap { element in
            element.error == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : (element.partition, KafkaError(element.error))
        }
    }

    deinit {
        rd_kafka_topic_partition_list_destroy(pointer)
    }
}
