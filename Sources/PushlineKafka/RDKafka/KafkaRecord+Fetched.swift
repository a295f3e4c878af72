import CRdKafka

extension KafkaRecord {
    /// A fetched record: what the consumer's reader read in `message`, or else its bytes and
    /// headers, copied into Swift memory. Its id's generation is 0 until the consumer's machine
    /// takes it (`ConsumerCore.flushPending`), which sets it in place: the record is built once,
    /// where it is fetched, and handed to the reader as it is (no copy of its fields on the way).
    ///
    /// The caller destroys `message` right after (held messages would pin librdkafka's whole
    /// fetch buffer, librdkafka#1382). A static function, so that `reader` is borrowed
    /// (`RDKafkaConsumed.read`).
    static func fetched(
        _ message: UnsafeMutablePointer<rd_kafka_message_t>,
        topicNames: inout RDKafkaTopicNames,
        reader: (any KafkaRecordReader)?
    ) -> KafkaRecord {
        let m = message.pointee
        let id = RecordID(topic: topicNames.name(of: m.rkt), partition: m.partition, offset: m.offset, generation: 0)
        var type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        let stamp = rd_kafka_message_timestamp(message, &type)
        let timestamp = type == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? nil : stamp
        let keyCount = m.key == nil ? 0 : m.key_len
        let valueCount = m.payload == nil ? 0 : m.len
        if let reading = reader?.read(
            key: m.key.map { UnsafeRawBufferPointer(start: $0, count: keyCount) },
            value: UnsafeRawBufferPointer(start: m.payload, count: valueCount)
        ) {
            return KafkaRecord(id: id, storage: [], keyCount: nil, headers: [], timestampMilliseconds: timestamp, reading: reading)
        }
        let storage = [UInt8](unsafeUninitializedCapacity: keyCount + valueCount) { buffer, initialized in
            if let key = m.key, keyCount > 0 {
                UnsafeMutableRawBufferPointer(buffer).copyMemory(from: UnsafeRawBufferPointer(start: key, count: keyCount))
            }
            if let payload = m.payload, valueCount > 0 {
                UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[keyCount...])
                    .copyMemory(from: UnsafeRawBufferPointer(start: payload, count: valueCount))
            }
            initialized = keyCount + valueCount
        }
        return KafkaRecord(
            id: id,
            storage: storage,
            keyCount: m.key == nil ? nil : keyCount,
            headers: Self.headers(of: message),
            timestampMilliseconds: timestamp
        )
    }

    /// `message`'s headers, copied (they stay owned by the message).
    private static func headers(of message: UnsafeMutablePointer<rd_kafka_message_t>) -> [KafkaHeader] {
        var list: OpaquePointer?
        guard rd_kafka_message_headers(message, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list else { return [] }
        var headers: [KafkaHeader] = []
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
        return headers
    }
}
