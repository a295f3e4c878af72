/// The header fields of requests submitted but not yet sent, laid out in one reused byte array
/// (names lowercased) without per-header allocations. A request's fields wait here until its
/// HEADERS frame leaves: only then does `HPACKRequestEncoder` write them (so the encoder's model
/// of the peer's dynamic table changes in the order the peer reads blocks, and a request whose
/// HEADERS never leaves changes nothing). Owned by one `NGHTTP2Session`; never shared. A caller
/// writes a request's fields into it with `HTTP2ClientHandler.submit(tag:body:writeHeaders:)`.
/// Fields that many requests share (`HTTP2ConstantFields`) are not copied: the block keeps a
/// reference to them.
public struct HTTP2HeaderBlock: ~Copyable {
    private struct Field {
        /// Offsets into `bytes`, or into the storage of `constants[constant]`.
        var nameStart: Int
        var nameCount: Int
        var valueStart: Int
        var valueCount: Int
        var neverIndex: Bool
        /// -1: the field's bytes are in `bytes`; else its index in `constants`.
        var constant: Int32
        /// The constant field's key (0 for a field of this block's own bytes).
        var key: UInt64
    }

    private var bytes: [UInt8] = []
    private var fields: [Field] = []
    /// The constant fields the waiting requests use, kept alive until they are sent.
    private var constants: [HTTP2ConstantFields] = []
    /// Submitted requests in stream order; those before `nextRequest` have been sent or dropped.
    private var requests: [(streamID: Int32, fields: Range<Int>)] = []
    private var nextRequest = 0
    /// Where the request being written began.
    private var openBytes = 0
    private var openFields = 0
    private var openConstants = 0

    init() {
        bytes.reserveCapacity(4096)
        fields.reserveCapacity(64)
    }

    /// A request's fields follow.
    mutating func beginRequest() {
        openBytes = bytes.count
        openFields = fields.count
        openConstants = constants.count
    }

    /// nghttp2 took the request as stream `streamID`: its fields wait for its HEADERS frame.
    mutating func commitRequest(streamID: Int32) {
        requests.append((streamID, openFields..<fields.count))
    }

    /// nghttp2 refused the request: its fields go.
    mutating func abandonRequest() {
        bytes.removeSubrange(openBytes...)
        fields.removeSubrange(openFields...)
        constants.removeSubrange(openConstants...)
        if nextRequest == requests.count { reset() }
    }

    /// The request on `streamID`, whose HEADERS frame is leaving: how many fields it has, and
    /// how many bytes their names and values take. Requests submitted before it whose HEADERS did
    /// not leave (nghttp2 dropped them) are forgotten. nil when no waiting request has that stream.
    mutating func request(onStream streamID: Int32) -> (fields: Int, bytes: Int)? {
        while nextRequest < requests.count, requests[nextRequest].streamID < streamID { nextRequest += 1 }
        guard nextRequest < requests.count, requests[nextRequest].streamID == streamID else { return nil }
        let range = requests[nextRequest].fields
        var size = 0
        for index in range { size += fields[index].nameCount + fields[index].valueCount }
        return (range.count, size)
    }

    /// Calls `body` with each field of the request `request(onStream:)` found: its position in
    /// the block, name, value, whether it is never indexed, and its constant key (0 unless it is
    /// one of an `HTTP2ConstantFields`). The request is then done.
    mutating func forEachFieldOfFoundRequest(_ body: (Int, UnsafeRawBufferPointer, UnsafeRawBufferPointer, Bool, UInt64) -> Void) {
        let range = requests[nextRequest].fields
        nextRequest += 1
        bytes.withUnsafeBytes { all in
            for (position, index) in range.enumerated() {
                let field = fields[index]
                if field.constant >= 0 {
                    let constant = constants[Int(field.constant)].fields[field.nameStart]
                    body(position, constant.name, constant.value, constant.neverIndex, constant.key)
                    continue
                }
                body(
                    position,
                    UnsafeRawBufferPointer(rebasing: all[field.nameStart..<field.nameStart + field.nameCount]),
                    UnsafeRawBufferPointer(rebasing: all[field.valueStart..<field.valueStart + field.valueCount]),
                    field.neverIndex,
                    0
                )
            }
        }
        if nextRequest == requests.count { reset() }
    }

    /// Nothing waits: the storage is reused from the start.
    private mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        fields.removeAll(keepingCapacity: true)
        constants.removeAll(keepingCapacity: true)
        requests.removeAll(keepingCapacity: true)
        nextRequest = 0
        openBytes = 0
        openFields = 0
        openConstants = 0
    }

    /// Appends every field of `constants`, by reference: no bytes copied.
    public mutating func append(_ constants: HTTP2ConstantFields) {
        // A request before this one may hold it already (each request holds the same few: the
        // pseudo-headers, the token, the fields before and after the id).
        let recent = self.constants.indices.suffix(4)
        let index: Int
        if let held = recent.first(where: { self.constants[$0] === constants }) {
            index = held
        } else {
            index = self.constants.count
            self.constants.append(constants)
        }
        for (position, field) in constants.fields.enumerated() {
            // For a constant field, `nameStart` is its index among the constants' fields.
            fields.append(
                Field(
                    nameStart: position,
                    nameCount: field.name.count,
                    valueStart: 0,
                    valueCount: field.value.count,
                    neverIndex: field.neverIndex,
                    constant: Int32(index),
                    key: field.key
                )
            )
        }
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
            Field(
                nameStart: nameStart,
                nameCount: valueStart - nameStart,
                valueStart: valueStart,
                valueCount: bytes.count - valueStart,
                neverIndex: neverIndex,
                constant: -1,
                key: 0
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
}
