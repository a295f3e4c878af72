import CRdKafka

/// What one message of a consumer queue carries: a record (read by the consumer's reader, or
/// copied into Swift memory; not yet taken by the consumer's machine), or an error librdkafka
/// reports through a message (the end of a partition is not one).
enum RDKafkaConsumed {
    case record(KafkaRecord)
    case error(KafkaError)
    case endOfPartition

    /// Reads `message`; the caller destroys it right after.
    init(
        _ message: UnsafeMutablePointer<rd_kafka_message_t>,
        topicNames: inout RDKafkaTopicNames,
        reader: (any KafkaRecordReader)?
    ) {
        let err = message.pointee.err
        if err == RD_KAFKA_RESP_ERR_NO_ERROR {
            self = .record(KafkaRecord(fetched: message, topicNames: &topicNames, reader: reader))
        } else if err == RD_KAFKA_RESP_ERR__PARTITION_EOF {
            self = .endOfPartition
        } else {
            let place = message.pointee.rkt.map { "\(String(cString: rd_kafka_topic_name($0)))[\(message.pointee.partition)]: " } ?? ""
            self = .error(KafkaError(err, message: place + String(cString: rd_kafka_message_errstr(message))))
        }
    }
}
