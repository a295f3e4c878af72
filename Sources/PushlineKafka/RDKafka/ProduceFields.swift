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

extension rd_kafka_vu_t {
    static func field(_ type: rd_kafka_vtype_t, _ fill: (inout rd_kafka_vu_t.__Unnamed_union_u) -> Void) -> rd_kafka_vu_t {
        var field = rd_kafka_vu_t()
        field.vtype = type
        fill(&field.u)
        return field
    }
}
