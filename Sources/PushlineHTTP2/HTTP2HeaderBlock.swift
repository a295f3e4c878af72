import CNGHTTP2

/// Scratch storage for building an `nghttp2_nv` array without per-header allocations: names and
/// values are copied (names lowercased) into one reused byte array, and the nv entries into a
/// reused C array. nghttp2's submit functions copy the pairs, so the storage is reused at once.
/// Owned by one `NGHTTP2Session`; never shared. A caller writes a request's fields into it with
/// `HTTP2ClientHandler.submit(tag:body:writeHeaders:)`.
public struct HTTP2HeaderBlock: ~Copyable {
    private var bytes: [UInt8] = []
    private var fields: [(nameStart: Int, nameCount: Int, valueStart: Int, valueCount: Int, flags: UInt8)] = []
    private var nv: UnsafeMutablePointer<nghttp2_nv>
    private var nvCapacity: Int

    init() {
        nvCapacity = 16
        // Freed in deinit; reallocated only when a block has more fields than ever before.
        nv = .allocate(capacity: nvCapacity)
        bytes.reserveCapacity(1024)
        fields.reserveCapacity(16)
    }

    deinit { nv.deallocate() }

    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        fields.removeAll(keepingCapacity: true)
    }

    /// Appends a field whose name is lowercase already (a literal), without building a string:
    /// `value` and `valueSuffix` are copied as they are, one after the other.
    public mutating func append(_ name: StaticString, _ value: String, valueSuffix: String = "", neverIndex: Bool) {
        let nameStart = bytes.count
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        let valueStart = bytes.count
        Self.appendUTF8(value, to: &bytes)
        if !valueSuffix.isEmpty { Self.appendUTF8(valueSuffix, to: &bytes) }
        endField(nameStart: nameStart, valueStart: valueStart, neverIndex: neverIndex)
    }

    /// Appends a field whose value is `valuePrefix` followed by `valueBytes` (a device token
    /// from a job's bytes, an id formatted on the stack): no string for the value.
    public mutating func append(_ name: String, valuePrefix: String = "", valueBytes: UnsafeRawBufferPointer, neverIndex: Bool) {
        let nameStart = bytes.count
        Self.appendUTF8(name, to: &bytes)
        let valueStart = bytes.count
        if !valuePrefix.isEmpty { Self.appendUTF8(valuePrefix, to: &bytes) }
        bytes.append(contentsOf: valueBytes)
        endField(nameStart: nameStart, valueStart: valueStart, neverIndex: neverIndex)
    }

    /// Records the field whose name starts at `nameStart` and whose value runs from `valueStart`
    /// to the end of the bytes written so far.
    private mutating func endField(nameStart: Int, valueStart: Int, neverIndex: Bool) {
        fields.append(
            (
                nameStart, valueStart - nameStart, valueStart, bytes.count - valueStart,
                neverIndex ? UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) : 0
            )
        )
    }

    /// A string's UTF-8 bytes, in place when it is stored contiguously (native strings are).
    private static func appendUTF8(_ string: String, to bytes: inout [UInt8]) {
        if string.utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil {
            bytes.append(contentsOf: string.utf8)
        }
    }

    /// Appends a field; the name is lowercased if it is not already (HTTP/2 requires it).
    public mutating func append(_ name: String, _ value: String, valueSuffix: String = "", neverIndex: Bool) {
        let nameStart = bytes.count
        var name = name
        name.withUTF8 { utf8 in
            // Names are almost always lowercase already: copy them whole, lowercase otherwise.
            if utf8.contains(where: { $0 &- 0x41 < 26 }) {
                for byte in utf8 { bytes.append(byte &- 0x41 < 26 ? byte | 0x20 : byte) }
            } else {
                bytes.append(contentsOf: utf8)
            }
        }
        let valueStart = bytes.count
        Self.appendUTF8(value, to: &bytes)
        if !valueSuffix.isEmpty { Self.appendUTF8(valueSuffix, to: &bytes) }
        endField(nameStart: nameStart, valueStart: valueStart, neverIndex: neverIndex)
    }

    /// Calls `body` with an nv array over the block; the pointers are valid only inside `body`.
    mutating func withNVArray<R>(_ body: (UnsafePointer<nghttp2_nv>, Int) throws -> R) rethrows -> R {
        if fields.count > nvCapacity {
            nv.deallocate()
            nvCapacity = fields.count * 2
            nv = .allocate(capacity: nvCapacity)
        }
        let nv = self.nv
        let fields = self.fields
        return try bytes.withUnsafeMutableBufferPointer { storage in
            guard let base = storage.baseAddress else { return try body(UnsafePointer(nv), 0) }
            for (index, field) in fields.enumerated() {
                nv[index] = nghttp2_nv(
                    name: base + field.nameStart,
                    value: base + field.valueStart,
                    namelen: field.nameCount,
                    valuelen: field.valueCount,
                    flags: field.flags
                )
            }
            return try body(UnsafePointer(nv), fields.count)
        }
    }
}
