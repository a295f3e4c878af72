import NIOCore

/// One server stream: the request being assembled, then the response body still to send.
///
/// A class: nghttp2 reports a request header by header, and mutating a struct stored in the
/// streams dictionary for each one cost a fifth of the server's time. Headers are kept as bytes
/// (one buffer per request, no `String` per field) until the delegate asks for them.
final class ServerStream {
    let streamID: Int32
    /// Sized for a typical APNs request (pseudo-headers, a JWT, a few apns-* headers) in one allocation.
    var fields = HTTP2HeaderFields(capacity: 1024)
    var body: ByteBuffer?
    var pathNeverIndexed = false
    var delivered = false
    var responded = false
    var responseBody: ByteBuffer?

    init(streamID: Int32) {
        self.streamID = streamID
    }

    /// Records one received field. Names arrive lowercase (nghttp2 rejects others).
    func received(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, neverIndex: Bool) {
        // ":path" is the only 5-byte name starting with ':' nghttp2 lets through.
        if name.count == 5, name[0] == UInt8(ascii: ":") { pathNeverIndexed = neverIndex }
        fields.append(name: name, value: value, neverIndex: neverIndex, lowercasing: false)
    }

    /// Moves the assembled request out (no reference counting): once delivered, the stream only
    /// needs its response state.
    func takeRequest() -> HTTP2ServerRequest {
        var fields = Self.noFields
        swap(&fields, &self.fields)
        let body = self.body
        self.body = nil
        return HTTP2ServerRequest(streamID: streamID, fields: fields, body: body, pathNeverIndexed: pathNeverIndexed)
    }

    private static let noFields = HTTP2HeaderFields(capacity: 0)

    func readBody(into buffer: UnsafeMutableRawBufferPointer) -> (count: Int, end: Bool) {
        guard responseBody != nil else { return (0, true) }
        let count = responseBody!.readWithUnsafeReadableBytes { bytes in
            let count = min(bytes.count, buffer.count)
            if count > 0 { buffer.baseAddress!.copyMemory(from: bytes.baseAddress!, byteCount: count) }
            return count
        }
        let end = responseBody!.readableBytes == 0
        if end { responseBody = nil }
        return (count, end)
    }
}
