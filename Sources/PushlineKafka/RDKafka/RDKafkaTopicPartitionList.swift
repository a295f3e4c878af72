import CRdKafka

/// Owns an `rd_kafka_topic_partition_list_t` built from Swift values; destroyed in deinit.
final class RDKafkaTopicPartitionList {
    let pointer: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>

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

    /// Topic names (`String` per element) in a list librdkafka owns; the list is only read.
    static func partitions(of list: UnsafePointer<rd_kafka_topic_partition_list_t>) -> [TopicPartition] {
        let count = Int(list.pointee.cnt)
        guard count > 0, let elements = list.pointee.elems else { return [] }
        return (0..<count).map {
            TopicPartition(topic: String(cString: elements[$0].topic), partition: elements[$0].partition)
        }
    }

    /// Per-element errors after a call that fills them in (offsets_store, commit).
    var elementErrors: [(TopicPartition, KafkaError)] {
        let count = Int(pointer.pointee.cnt)
        guard count > 0, let elements = pointer.pointee.elems else { return [] }
        return (0..<count).compactMap {
            let element = elements[$0]
            guard element.err != RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
            return (TopicPartition(topic: String(cString: element.topic), partition: element.partition), KafkaError(element.err))
        }
    }

    deinit {
        rd_kafka_topic_partition_list_destroy(pointer)
    }
}
