import Synchronization

/// Header fields that many requests send unchanged (a connection's pseudo-headers, the
/// provider token): laid out once, lowercased, in storage of their own that a request's block
/// points at instead of copying (`HTTP2HeaderBlock.append(_:)`). Each field has a key no other
/// field of any other instance has, so the encoder knows a field it wrote before by that key
/// alone, without comparing bytes (`HPACKRequestEncoder`). Immutable.
public final class HTTP2ConstantFields: Sendable {
    struct Field {
        var name: UnsafeRawBufferPointer
        var value: UnsafeRawBufferPointer
        var neverIndex: Bool
        /// Unique among every constant field made by this process (never 0).
        var key: UInt64
    }

    private static let instances = Atomic<UInt64>(0)

    nonisolated(unsafe) private let storage: UnsafeMutableRawBufferPointer
    nonisolated(unsafe) let fields: [Field]

    /// - Parameter fields: names (lowercased here, as HTTP/2 requires), values, and whether each is
    ///   never indexed.
    public init(_ fields: [(name: String, value: String, neverIndex: Bool)]) {
        let size = fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }
        storage = .allocate(byteCount: max(1, size), alignment: 1)
        let id = Self.instances.wrappingAdd(1, ordering: .relaxed).newValue
        precondition(fields.count < 1 << 16, "too many constant fields")
        var offset = 0
        var laid: [Field] = []
        laid.reserveCapacity(fields.count)
        for (index, field) in fields.enumerated() {
            let nameStart = offset
            for byte in field.name.utf8 {
                storage[offset] = byte &- 0x41 < 26 ? byte | 0x20 : byte
                offset += 1
            }
            let valueStart = offset
            for byte in field.value.utf8 {
                storage[offset] = byte
                offset += 1
            }
            laid.append(
                Field(
                    name: UnsafeRawBufferPointer(rebasing: storage[nameStart..<valueStart]),
                    value: UnsafeRawBufferPointer(rebasing: storage[valueStart..<offset]),
                    neverIndex: field.neverIndex,
                    key: id << 16 | UInt64(index)
                )
            )
        }
        self.fields = laid
    }

    deinit {
        storage.deallocate()
    }

    public var count: Int { fields.count }
}
