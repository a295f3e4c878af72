/// A response's regular header fields (pseudo-headers excluded), in the order received, kept as
/// the bytes nghttp2 handed over: one array for the whole block instead of two `String`s and an
/// array element per field. A field becomes a `String` only when asked for, and
/// `first(named:reusing:)` hands back a string the caller already has when the bytes are equal
/// (an APNs answer echoes the request's `apns-id`).
///
/// Layout per field: name length and value length (4 bytes each, little endian), the never-index
/// flag (1 byte), then the name's and the value's bytes.
public struct HTTP2ResponseHeaders: Sendable, Hashable, Sequence, ExpressibleByArrayLiteral {
    private var bytes: [UInt8] = []

    public init() {}

    public init(_ fields: some Sequence<HTTP2Header>) {
        for field in fields {
            var name = field.name
            var value = field.value
            name.withUTF8 { name in value.withUTF8 { append(name: name, value: $0, neverIndex: field.neverIndex) } }
        }
    }

    public init(arrayLiteral fields: HTTP2Header...) {
        self.init(fields)
    }

    public var isEmpty: Bool { bytes.isEmpty }

    /// Removes every field and keeps the storage (a recycled stream's next response reuses it).
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
    }

    mutating func append(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, neverIndex: Bool) {
        let needed = 9 + name.count + value.count
        if bytes.isEmpty {
            // Room for a typical answer's few fields in the one allocation.
            bytes.reserveCapacity(Swift.max(needed, 96))
        }
        Self.appendLength(name.count, to: &bytes)
        Self.appendLength(value.count, to: &bytes)
        bytes.append(neverIndex ? 1 : 0)
        bytes.append(contentsOf: name)
        bytes.append(contentsOf: value)
    }

    /// The value of the first field named `name` (names are lowercase in HTTP/2), or nil.
    public func first(named name: String) -> String? {
        first(named: name, reusing: nil)
    }

    /// `first(named:)`, returning `known` itself when the value's bytes equal it.
    public func first(named name: String, reusing known: String?) -> String? {
        var name = name
        return name.withUTF8 { wanted -> String? in
            bytes.withUnsafeBufferPointer { all -> String? in
                var offset = 0
                while offset < all.count {
                    let field = Self.field(in: all, at: offset)
                    offset = field.end
                    guard Self.equal(field.name, wanted) else { continue }
                    if let known, Self.equal(known, field.value) { return known }
                    return String(decoding: field.value, as: UTF8.self)
                }
                return nil
            }
        }
    }

    /// How the first field named `name` compares with `expected`.
    public enum Comparison: Sendable, Hashable {
        case absent
        case equal
        case different(String)
    }

    /// Compares the first field named `name` with `expected` without making a string unless it
    /// differs (an APNs answer echoing the request's `apns-id`, formatted on the stack).
    public func compare(named name: String, with expected: UnsafeRawBufferPointer) -> Comparison {
        var name = name
        return name.withUTF8 { wanted -> Comparison in
            bytes.withUnsafeBufferPointer { all -> Comparison in
                var offset = 0
                while offset < all.count {
                    let field = Self.field(in: all, at: offset)
                    offset = field.end
                    guard Self.equal(field.name, wanted) else { continue }
                    if Self.equal(field.value, expected.bindMemory(to: UInt8.self)) { return .equal }
                    return .different(String(decoding: field.value, as: UTF8.self))
                }
                return .absent
            }
        }
    }

    public func makeIterator() -> IndexingIterator<[HTTP2Header]> {
        fields.makeIterator()
    }

    /// Every field as an `HTTP2Header`.
    public var fields: [HTTP2Header] {
        bytes.withUnsafeBufferPointer { all in
            var fields: [HTTP2Header] = []
            var offset = 0
            while offset < all.count {
                let field = Self.field(in: all, at: offset)
                offset = field.end
                fields.append(
                    HTTP2Header(
                        String(decoding: field.name, as: UTF8.self),
                        String(decoding: field.value, as: UTF8.self),
                        neverIndex: field.neverIndex
                    )
                )
            }
            return fields
        }
    }

    private static func appendLength(_ length: Int, to bytes: inout [UInt8]) {
        let length = UInt32(truncatingIfNeeded: length)
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: length >> UInt32(shift))) }
    }

    private static func length(in bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Int {
        var length = 0
        for index in 0..<4 { length |= Int(bytes[offset + index]) << (8 * index) }
        return length
    }

    /// Byte equality with one `memcmp` (the generic `elementsEqual` compared byte by byte).
    private static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        UnsafeRawBufferPointer(a).hasSameBytes(as: UnsafeRawBufferPointer(b))
    }

    private static func equal(_ string: String, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard string.utf8.count == bytes.count else { return false }
        return string.utf8.withContiguousStorageIfAvailable { equal($0, bytes) } ?? string.utf8.elementsEqual(bytes)
    }

    private static func field(
        in bytes: UnsafeBufferPointer<UInt8>,
        at offset: Int
    ) -> (name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, neverIndex: Bool, end: Int) {
        let nameCount = length(in: bytes, at: offset)
        let valueCount = length(in: bytes, at: offset + 4)
        let nameStart = offset + 9
        let valueStart = nameStart + nameCount
        return (
            UnsafeBufferPointer(rebasing: bytes[nameStart..<valueStart]),
            UnsafeBufferPointer(rebasing: bytes[valueStart..<(valueStart + valueCount)]),
            bytes[offset + 8] != 0,
            valueStart + valueCount
        )
    }
}
