import CRdKafka

/// Header names (NUL-terminated) and values laid out in one buffer, so `produceva` can get
/// pointers to all of them at once; librdkafka copies headers before produceva returns.
struct HeaderArena {
    private let headers: [KafkaHeader]

    init(_ headers: [KafkaHeader]) { self.headers = headers }

    func withFields<R>(_ body: ([rd_kafka_vu_t]) -> R) -> R {
        guard !headers.isEmpty else { return body([]) }
        let size = headers.reduce(0) { $0 + $1.key.utf8.count + 1 + ($1.value?.count ?? 0) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(size, 1), alignment: 1)
        defer { buffer.deallocate() }
        var fields: [rd_kafka_vu_t] = []
        fields.reserveCapacity(headers.count)
        var position = 0
        for header in headers {
            let name = buffer.baseAddress! + position
            for byte in header.key.utf8 {
                buffer[position] = byte
                position += 1
            }
            buffer[position] = 0
            position += 1
            let value: UnsafeMutableRawPointer? = header.value.map { bytes in
                let start = buffer.baseAddress! + position
                bytes.withUnsafeBytes { if let base = $0.baseAddress { start.copyMemory(from: base, byteCount: $0.count) } }
                position += bytes.count
                return start
            }
            fields.append(
                .field(RD_KAFKA_VTYPE_HEADER) {
                    $0.header.name = UnsafePointer(name.assumingMemoryBound(to: CChar.self))
                    $0.header.val = UnsafeRawPointer(value)
                    $0.header.size = header.value.map { $0.count } ?? -1
                }
            )
        }
        return body(fields)
    }
}
