import PushlineHTTP2

/// Header fields kept as bytes in one buffer: no `String` and no array element per field, so a
/// server holds a request's headers with one allocation and reads them without decoding.
///
/// Each field is a record: a flags byte (never-indexed), the name and value lengths (4 bytes each,
/// host order), then the name and value bytes. Names are stored lowercased (HTTP/2 forbids
/// uppercase names). Fields keep their order; repeats are kept. A value type: copies share the
/// bytes until one of them is written (copy on write).
public struct HTTP2HeaderFields: Sendable {
    @usableFromInline var storage: HTTP2HeaderFieldsStorage
    /// The number of fields.
    public private(set) var count = 0

    @usableFromInline static let recordHeader = 9
    @usableFromInline static let neverIndexFlag: UInt8 = 1

    public init(capacity: Int = 256) {
        storage = HTTP2HeaderFieldsStorage(capacity: capacity)
    }

    public init(_ headers: [HTTP2Header]) {
        self.init()
        for header in headers { append(header.name, header.value, neverIndex: header.neverIndex) }
    }

    /// Appends a field; `name` is lowercased (ASCII) on the way in.
    public mutating func append(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, neverIndex: Bool) {
        append(name: name, value: value, neverIndex: neverIndex, lowercasing: true)
    }

    /// `lowercasing: false` keeps the name as given: received names (already lowercase, checked by
    /// nghttp2) and requests built by hand, which report their headers verbatim.
    mutating func append(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, neverIndex: Bool, lowercasing: Bool) {
        let total = Self.recordHeader + name.count + value.count
        if !isKnownUniquelyReferenced(&storage) {
            storage = storage.copy(minimumCapacity: storage.used + total)
        }
        storage.reserve(total)
        let out = storage.bytes + storage.used
        out.storeBytes(of: neverIndex ? Self.neverIndexFlag : 0, as: UInt8.self)
        out.storeBytes(of: UInt32(truncatingIfNeeded: name.count), toByteOffset: 1, as: UInt32.self)
        out.storeBytes(of: UInt32(truncatingIfNeeded: value.count), toByteOffset: 5, as: UInt32.self)
        var offset = Self.recordHeader
        if lowercasing {
            for byte in name {
                out.storeBytes(of: byte &- 0x41 < 26 ? byte | 0x20 : byte, toByteOffset: offset, as: UInt8.self)
                offset += 1
            }
        } else if name.count > 0 {
            (out + offset).copyMemory(from: name.baseAddress!, byteCount: name.count)
            offset += name.count
        }
        if value.count > 0 {
            (out + offset).copyMemory(from: value.baseAddress!, byteCount: value.count)
        }
        storage.used += total
        count += 1
    }

    public mutating func append(_ name: String, _ value: String, neverIndex: Bool = false) {
        append(name, value, neverIndex: neverIndex, lowercasing: true)
    }

    mutating func append(_ name: String, _ value: String, neverIndex: Bool, lowercasing: Bool) {
        var name = name
        var value = value
        name.withUTF8 { name in
            value.withUTF8 { value in
                append(
                    name: UnsafeRawBufferPointer(name),
                    value: UnsafeRawBufferPointer(value),
                    neverIndex: neverIndex,
                    lowercasing: lowercasing
                )
            }
        }
    }

    public mutating func append(_ name: String, value: UnsafeRawBufferPointer, neverIndex: Bool = false) {
        var name = name
        name.withUTF8 { append(name: UnsafeRawBufferPointer($0), value: value, neverIndex: neverIndex) }
    }

    /// Empties the list and keeps its storage for reuse.
    public mutating func removeAll() {
        if isKnownUniquelyReferenced(&storage) {
            storage.used = 0
        } else {
            storage = HTTP2HeaderFieldsStorage(capacity: storage.capacity)
        }
        count = 0
    }

    /// Calls `body` with each field's name, value and never-indexed flag, in order. The buffers are
    /// valid only inside `body`.
    @inlinable
    public func forEach(
        _ body: (_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, _ neverIndex: Bool) throws -> Void
    ) rethrows {
        try withUnsafeFields { try $0.forEach(body) }
    }

    /// Calls `body` with a view of the fields whose buffers all stay valid until `body` returns.
    @inlinable
    public func withUnsafeFields<R>(_ body: (UnsafeHTTP2HeaderFields) throws -> R) rethrows -> R {
        // The storage stays alive (and unwritten: `self` is not mutated) until `body` returns.
        try withExtendedLifetime(storage) { try body(UnsafeHTTP2HeaderFields(storage: storage.readable)) }
    }

    /// Calls `body` with the value of the first field named `name` (lowercase); nil when absent.
    @inlinable
    public func withValue<R>(named name: String, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        var name = name
        return try name.withUTF8 { wanted in
            var found: UnsafeRawBufferPointer?
            var result: R?
            try forEach { fieldName, value, _ in
                guard found == nil, fieldName.count == wanted.count, fieldName.elementsEqual(wanted) else { return }
                found = value
                result = try body(value)
            }
            return result
        }
    }

    /// The value of the first field named `name` (lowercase), decoded as UTF-8.
    public func value(named name: String) -> String? {
        withValue(named: name) { String(decoding: $0, as: UTF8.self) }
    }

    /// The fields as `HTTP2Header` values (names and values decoded as UTF-8).
    public var headers: [HTTP2Header] {
        var headers: [HTTP2Header] = []
        headers.reserveCapacity(count)
        forEach { name, value, neverIndex in
            headers.append(
                HTTP2Header(
                    String(decoding: name, as: UTF8.self),
                    String(decoding: value, as: UTF8.self),
                    neverIndex: neverIndex
                )
            )
        }
        return headers
    }
}

/// Header fields read in place from an `HTTP2HeaderFields`' storage (see `withUnsafeFields`): the
/// buffers it yields are valid only while that call runs.
public struct UnsafeHTTP2HeaderFields {
    /// The storage; fields are records as described on `HTTP2HeaderFields`.
    @usableFromInline let storage: UnsafeRawBufferPointer

    @usableFromInline init(storage: UnsafeRawBufferPointer) {
        self.storage = storage
    }

    /// Calls `visit` with each field's name, value and never-indexed flag, in order.
    @inlinable
    public func forEach(
        _ visit: (_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, _ neverIndex: Bool) throws -> Void
    ) rethrows {
        try forEachRange { name, value, neverIndex in
            try visit(UnsafeRawBufferPointer(rebasing: storage[name]), UnsafeRawBufferPointer(rebasing: storage[value]), neverIndex)
        }
    }

    /// Calls `visit` with each field's name and value ranges in `storage`.
    @inlinable
    func forEachRange(_ visit: (_ name: Range<Int>, _ value: Range<Int>, _ neverIndex: Bool) throws -> Void) rethrows {
        var offset = 0
        while offset < storage.count {
            let flags = storage[offset]
            let nameCount = Int(storage.loadUnaligned(fromByteOffset: offset + 1, as: UInt32.self))
            let valueCount = Int(storage.loadUnaligned(fromByteOffset: offset + 5, as: UInt32.self))
            let nameStart = offset + HTTP2HeaderFields.recordHeader
            let valueStart = nameStart + nameCount
            offset = valueStart + valueCount
            try visit(nameStart..<valueStart, valueStart..<offset, flags & HTTP2HeaderFields.neverIndexFlag != 0)
        }
    }
}

@available(*, unavailable)
extension UnsafeHTTP2HeaderFields: Sendable {}
