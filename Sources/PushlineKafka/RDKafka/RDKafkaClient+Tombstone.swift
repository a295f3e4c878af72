import CRdKafka

extension RDKafkaClient {
    /// Enqueues a tombstone (a record with `key` and no value: compaction drops the key's earlier
    /// records) like `produce`, which always sends a value. nil when it was enqueued.
    func produceTombstone(topic: RDKafkaTopic, key: [UInt8], opaque: UnsafeMutableRawPointer?) -> KafkaError? {
        let error: OpaquePointer? = key.withUnsafeBytes { keyBytes in
            withUnsafeTemporaryAllocation(of: rd_kafka_vu_t.self, capacity: 5) { storage in
                var fields = ProduceFields(storage)
                fields.append(.field(RD_KAFKA_VTYPE_RKT) { $0.rkt = topic.pointer })
                fields.append(.field(RD_KAFKA_VTYPE_PARTITION) { $0.i32 = RD_KAFKA_PARTITION_UA })
                // F_COPY: librdkafka copies the key before produceva returns. No VALUE field: a
                // NULL payload, which is what a tombstone is.
                fields.append(.field(RD_KAFKA_VTYPE_MSGFLAGS) { $0.i = RD_KAFKA_MSG_F_COPY })
                fields.append(
                    .field(RD_KAFKA_VTYPE_KEY) {
                        $0.mem.ptr = UnsafeMutableRawPointer(mutating: keyBytes.baseAddress)
                        $0.mem.size = keyBytes.count
                    }
                )
                if let opaque {
                    fields.append(.field(RD_KAFKA_VTYPE_OPAQUE) { $0.ptr = opaque })
                }
                return rd_kafka_produceva(handle, storage.baseAddress, fields.count)
            }
        }
        guard let error else { return nil }
        return KafkaError(taking: error)
    }
}
