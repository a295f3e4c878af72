import CRdKafka

/// What one message of a consumer queue carries when it is not a record: an error librdkafka
/// reports through a message, or the end of a partition (not an error).
enum RDKafkaConsumed {
    case error(KafkaError)
    case endOfPartition

    /// What `message` carries when it is not a record; nil for a record. The caller destroys
    /// `message` after.
    init?(_ message: UnsafeMutablePointer<rd_kafka_message_t>) {
        let err = message.pointee.err
        if err == RD_KAFKA_RESP_ERR_NO_ERROR {
            return nil
        } else if err == RD_KAFKA_RESP_ERR__PARTITION_EOF {
            self = .endOfPartition
        } else {
            let place = message.pointee.rkt.map { "\(String(cString: rd_kafka_topic_name($0)))[\(message.pointee.partition)]: " } ?? ""
            self = .error(KafkaError(err, message: place + String(cString: rd_kafka_message_errstr(message))))
        }
    }

    /// Reads `message`: a record is appended to `records` (read by the consumer's reader, or
    /// copied into Swift memory; not yet taken by the consumer's machine), anything else is
    /// returned. The caller destroys `message` right after.
    ///
    /// The record goes straight into the caller's array: handed out in an enum (even a consumed
    /// one) it was copied into the array and destroyed after. And a static function, not an
    /// initializer: an initializer takes its arguments owned, so the reader (an existential
    /// holding the worker's decoder) was copied, and destroyed, for every record. Together about
    /// 1.5% of the worker at one token per job.
    static func read(
        _ message: UnsafeMutablePointer<rd_kafka_message_t>,
        topicNames: inout RDKafkaTopicNames,
        reader: (any KafkaRecordReader)?,
        into records: inout [KafkaRecord]
    ) -> RDKafkaConsumed? {
        if let consumed = RDKafkaConsumed(message) { return consumed }
        records.append(KafkaRecord.fetched(message, topicNames: &topicNames, reader: reader))
        return nil
    }
}
