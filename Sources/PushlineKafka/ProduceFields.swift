import CRdKafka

/// Fills a temporary buffer of `rd_kafka_vu_t` front to back (the fields of one produce call).
struct ProduceFields {
    private let storage: UnsafeMutableBufferPointer<rd_kafka_vu_t>
    private(set) var count = 0

    init(_ storage: UnsafeMutableBufferPointer<rd_kafka_vu_t>) {
        self.storage = storage
    }

    mutating func append(_ field: rd_kafka_vu_t) {
        precondition(count < storage.count)
        (storage.baseAddress! + count).initialize(to: field)
        count += 1
    }
}
