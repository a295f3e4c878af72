import CRdKafka
import Logging

extension RDKafkaClient {
    /// Creates a producer; every bad property is reported at once.
    static func makeProducer(
        properties: [String: String],
        logger: Logger,
        onStatistics: (@Sendable (String) -> Void)?
    ) throws(KafkaError) -> RDKafkaClient {
        try make(type: RD_KAFKA_PRODUCER, properties: properties, logger: logger, onStatistics: onStatistics)
    }

    /// Records enqueued or in flight (not yet reported).
    var outstandingCount: Int { Int(rd_kafka_outq_len(handle)) }

    /// Enqueues one record (`produceva`, thread-safe); nil when it was enqueued, else why not (then
    /// no delivery report will come for it). `partition` nil: the partitioner picks one. `opaque`
    /// comes back with the record's delivery report. Key, value and headers are copied before
    /// this returns. A nil `value` sends no payload: a tombstone, which makes a compacted topic
    /// forget the key.
    func produce(
        topic: RDKafkaTopic,
        partition: Int32?,
        key: [UInt8]?,
        value: [UInt8]?,
        headers: [KafkaHeader],
        opaque: UnsafeMutableRawPointer?
    ) -> KafkaError? {
        let partition = partition ?? RD_KAFKA_PARTITION_UA
        let error: OpaquePointer? = key.withOptionalBytes { keyBytes in
            value.withOptionalBytes { valueBytes in
                HeaderArena(headers).withFields { headerFields in
                    // On the stack: this runs once per result record.
                    withUnsafeTemporaryAllocation(of: rd_kafka_vu_t.self, capacity: 6 + headerFields.count) { storage in
                        var fields = ProduceFields(storage)
                        fields.append(.field(RD_KAFKA_VTYPE_RKT) { $0.rkt = topic.pointer })
                        fields.append(.field(RD_KAFKA_VTYPE_PARTITION) { $0.i32 = partition })
                        // F_COPY: librdkafka copies key and value before produceva returns.
                        fields.append(.field(RD_KAFKA_VTYPE_MSGFLAGS) { $0.i = RD_KAFKA_MSG_F_COPY })
                        if let valueBytes {
                            fields.append(
                                .field(RD_KAFKA_VTYPE_VALUE) {
                                    $0.mem.ptr = UnsafeMutableRawPointer(mutating: valueBytes.baseAddress)
                                    $0.mem.size = valueBytes.count
                                }
                            )
                        }
                        if let keyBytes {
                            fields.append(
                                .field(RD_KAFKA_VTYPE_KEY) {
                                    $0.mem.ptr = UnsafeMutableRawPointer(mutating: keyBytes.baseAddress)
                                    $0.mem.size = keyBytes.count
                                }
                            )
                        }
                        if let opaque {
                            fields.append(.field(RD_KAFKA_VTYPE_OPAQUE) { $0.ptr = opaque })
                        }
                        for field in headerFields { fields.append(field) }
                        return rd_kafka_produceva(handle, storage.baseAddress, fields.count)
                    }
                }
            }
        }
        guard let error else { return nil }
        return KafkaError(taking: error)
    }

    /// Enqueues `count` records on `topic` in one call (`produce_batch`, thread-safe): the
    /// partitioner places each one, librdkafka copies keys and values before this returns, and
    /// each record's `opaque` comes back with its delivery report. The clocks are read and the
    /// topic locked once for the batch, not once per record. `record(i)` gives record `i`.
    /// Returns the records that were not enqueued, with why and their opaque (no report will
    /// come for them).
    func produceBatch(
        topic: RDKafkaTopic,
        count: Int,
        record: (Int) -> (key: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer, opaque: UnsafeMutableRawPointer?)
    ) -> [(index: Int, error: KafkaError, opaque: UnsafeMutableRawPointer?)] {
        guard count > 0 else { return [] }
        return withUnsafeTemporaryAllocation(of: rd_kafka_message_t.self, capacity: count) { messages in
            for index in 0..<count {
                let next = record(index)
                var message = rd_kafka_message_t()
                message.payload = UnsafeMutableRawPointer(mutating: next.value.baseAddress)
                message.len = next.value.count
                if let key = next.key {
                    message.key = UnsafeMutableRawPointer(mutating: key.baseAddress)
                    message.key_len = key.count
                }
                message._private = next.opaque
                (messages.baseAddress! + index).initialize(to: message)
            }
            defer { messages.baseAddress!.deinitialize(count: count) }
            let enqueued = rd_kafka_produce_batch(
                topic.pointer,
                RD_KAFKA_PARTITION_UA,
                RD_KAFKA_MSG_F_COPY,
                messages.baseAddress,
                Int32(clamping: count)
            )
            guard enqueued < count else { return [] }
            return messages.indices.compactMap { index in
                let message = messages[index]
                guard message.err != RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
                return (index, KafkaError(message.err), message._private)
            }
        }
    }

    /// Serves queued callbacks (delivery reports, logs, errors, statistics), waiting up to
    /// `timeout` for one; returns how many events were served.
    func poll(timeout: Duration) -> Int {
        Int(rd_kafka_poll(handle, Int32(clamping: timeout.milliseconds)))
    }

    /// Waits up to `timeout` for every outstanding record to be reported, serving callbacks
    /// meanwhile; nil when none is left, else an error naming how many are.
    func flush(timeout: Duration) -> KafkaError? {
        let err = rd_kafka_flush(handle, Int32(clamping: timeout.milliseconds))
        guard err != RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
        return KafkaError(err, message: "flush timed out with \(outstandingCount) records outstanding")
    }

    /// Purges every record queued or in flight: each one's delivery report comes (with
    /// `_PURGE_QUEUE` or `_PURGE_INFLIGHT`) from the next poll or flush.
    func purgeAll() {
        _ = rd_kafka_purge(handle, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT)
    }
}

extension Optional where Wrapped == [UInt8] {
    func withOptionalBytes<R>(_ body: (UnsafeRawBufferPointer?) -> R) -> R {
        switch self {
        case .none: return body(nil)
        case .some(let bytes): return bytes.withUnsafeBytes { body($0) }
        }
    }
}
