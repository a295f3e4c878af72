import CRdKafka

/// A consumed message copied into Swift memory, before it is matched to an assignment: what the
/// consumer's reader read in it, or else its bytes and headers.
struct CopiedMessage {
    var topicPartition: TopicPartition
    var offset: Int64
    /// The key's bytes (when there is a key), then the value's: one allocation. Empty when
    /// `reading` is set.
    var storage: [UInt8]
    var keyCount: Int?
    var headers: [KafkaHeader]
    var timestampMilliseconds: Int64?
    /// What the consumer's `KafkaRecordReader` read in the message; nil when it has none or
    /// declined the message (then `storage` and `headers` hold it).
    var reading: (any AnyObject & Sendable)?

    /// Reads or copies everything `message` holds; the caller destroys it right after (held
    /// messages would pin librdkafka's whole fetch buffer, librdkafka#1382).
    init(
        copying message: UnsafeMutablePointer<rd_kafka_message_t>,
        topicNames: inout RDKafkaTopicNames,
        reader: (any KafkaRecordReader)?
    ) {
        let m = message.pointee
        topicPartition = TopicPartition(topic: topicNames.name(of: m.rkt), partition: m.partition)
        offset = m.offset
        var type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        let timestamp = rd_kafka_message_timestamp(message, &type)
        timestampMilliseconds = type == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? nil : timestamp
        let keyCount = m.key == nil ? 0 : m.key_len
        let valueCount = m.payload == nil ? 0 : m.len
        if let reader,
            let reading = reader.read(
                key: m.key.map { UnsafeRawBufferPointer(start: $0, count: keyCount) },
                value: UnsafeRawBufferPointer(start: m.payload, count: valueCount)
            )
        {
            self.reading = reading
            storage = []
            self.keyCount = nil
            headers = []
            return
        }
        reading = nil
        storage = [UInt8](unsafeUninitializedCapacity: keyCount + valueCount) { buffer, initialized in
            if let key = m.key, keyCount > 0 {
                UnsafeMutableRawBufferPointer(buffer).copyMemory(from: UnsafeRawBufferPointer(start: key, count: keyCount))
            }
            if let payload = m.payload, valueCount > 0 {
                UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[keyCount...])
                    .copyMemory(from: UnsafeRawBufferPointer(start: payload, count: valueCount))
            }
            initialized = keyCount + valueCount
        }
        self.keyCount = m.key == nil ? nil : keyCount
        headers = []
        var list: OpaquePointer?
        // The headers stay owned by the message.
        guard rd_kafka_message_headers(message, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list else { return }
        var index = 0
        var name: UnsafePointer<CChar>?
        var bytes: UnsafeRawPointer?
        var size = 0
        while rd_kafka_header_get_all(list, index, &name, &bytes, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
            headers.append(
                KafkaHeader(
                    key: name.map { String(cString: $0) } ?? "",
                    value: bytes.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: size)) }
                )
            )
            index += 1
        }
    }
}
