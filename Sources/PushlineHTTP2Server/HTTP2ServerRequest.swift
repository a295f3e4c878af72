import NIOCore
import PushlineHTTP2

/// A complete request received by a server connection (headers and body both ended).
/// `headers` excludes pseudo-headers, which are split out; `neverIndex` tells how the client
/// encoded each header.
///
/// Every field, pseudo-headers included, is kept as received in one `HTTP2HeaderFields` buffer:
/// the `String` properties decode on access, and a server on a hot path reads the bytes instead
/// (`withPath`, `forEachHeader`, `withHeaderValue`).
public struct HTTP2ServerRequest: Sendable {
    public var streamID: Int32
    public var body: ByteBuffer?
    /// Whether the client sent `:path` as never-indexed.
    public var pathNeverIndexed: Bool
    /// Pseudo-headers (names starting with ":") and regular headers, in the order received.
    @usableFromInline var fields: HTTP2HeaderFields

    public init(
        streamID: Int32,
        method: String = "",
        scheme: String = "",
        authority: String = "",
        path: String = "",
        headers: [HTTP2Header] = [],
        body: ByteBuffer? = nil,
        pathNeverIndexed: Bool = false
    ) {
        self.streamID = streamID
        self.body = body
        self.pathNeverIndexed = pathNeverIndexed
        fields = HTTP2HeaderFields()
        fields.append(":method", method, neverIndex: false, lowercasing: false)
        fields.append(":scheme", scheme, neverIndex: false, lowercasing: false)
        fields.append(":authority", authority, neverIndex: false, lowercasing: false)
        fields.append(":path", path, neverIndex: pathNeverIndexed, lowercasing: false)
        for header in headers { fields.append(header.name, header.value, neverIndex: header.neverIndex, lowercasing: false) }
    }

    init(streamID: Int32, fields: HTTP2HeaderFields, body: ByteBuffer?, pathNeverIndexed: Bool) {
        self.streamID = streamID
        self.fields = fields
        self.body = body
        self.pathNeverIndexed = pathNeverIndexed
    }

    public var method: String {
        get { pseudo(":method") }
        set { setPseudo(":method", newValue) }
    }

    public var scheme: String {
        get { pseudo(":scheme") }
        set { setPseudo(":scheme", newValue) }
    }

    public var authority: String {
        get { pseudo(":authority") }
        set { setPseudo(":authority", newValue) }
    }

    public var path: String {
        get { pseudo(":path") }
        set { setPseudo(":path", newValue) }
    }

    /// Regular headers (no pseudo-headers), in the order received.
    public var headers: [HTTP2Header] {
        get {
            var headers: [HTTP2Header] = []
            forEachHeader { name, value, neverIndex in
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
        set {
            var rebuilt = HTTP2HeaderFields()
            fields.forEach { name, value, neverIndex in
                if name.first == UInt8(ascii: ":") {
                    rebuilt.append(name: name, value: value, neverIndex: neverIndex, lowercasing: false)
                }
            }
            for header in newValue {
                rebuilt.append(header.name, header.value, neverIndex: header.neverIndex, lowercasing: false)
            }
            fields = rebuilt
        }
    }

    /// Calls `body` with each regular header's name, value and never-indexed flag, in order. The
    /// buffers are valid only inside `body`.
    @inlinable
    public func forEachHeader(
        _ body: (_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, _ neverIndex: Bool) throws -> Void
    ) rethrows {
        try fields.forEach { name, value, neverIndex in
            if name.first != UInt8(ascii: ":") { try body(name, value, neverIndex) }
        }
    }

    /// Calls `body` with every field, pseudo-headers (":path", ...) included, in the order
    /// received. The buffers stay valid until `body` returns, so a server can collect the ones it
    /// needs in one pass and use them together.
    @inlinable
    public func withUnsafeFields<R>(_ body: (UnsafeHTTP2HeaderFields) throws -> R) rethrows -> R {
        try fields.withUnsafeFields(body)
    }

    /// Calls `body` with the value of the first regular header named `name` (lowercase); nil when absent.
    @inlinable
    public func withHeaderValue<R>(named name: String, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        try fields.withValue(named: name, body)
    }

    /// Calls `body` with the `:path` bytes (empty when absent).
    public func withPath<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withPseudo(":path", body)
    }

    private func withPseudo<R>(_ name: String, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if let result = try fields.withValue(named: name, body) { return result }
        return try body(UnsafeRawBufferPointer(start: nil, count: 0))
    }

    private func pseudo(_ name: String) -> String {
        fields.value(named: name) ?? ""
    }

    private mutating func setPseudo(_ name: String, _ value: String) {
        var rebuilt = HTTP2HeaderFields()
        var replaced = false
        fields.forEach { fieldName, fieldValue, neverIndex in
            if !replaced, fieldName.elementsEqual(name.utf8) {
                replaced = true
                rebuilt.append(name, value, neverIndex: neverIndex, lowercasing: false)
            } else {
                rebuilt.append(name: fieldName, value: fieldValue, neverIndex: neverIndex, lowercasing: false)
            }
        }
        if !replaced { rebuilt.append(name, value, neverIndex: false, lowercasing: false) }
        fields = rebuilt
    }
}
