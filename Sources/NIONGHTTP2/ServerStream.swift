import NIOCore

/// One server stream: the request being assembled, then the response body still to send.
///
/// A class: nghttp2 reports a request header by header, and mutating a struct stored in the
/// streams dictionary for each one cost a fifth of the server's time. Headers are kept as bytes
/// (one buffer per request, no `String` per field) until the delegate asks for them.
///
/// The handler reuses streams once closed (`reuse`): the object and, when the delegate has let go
/// of the last request, its header and body storage too, so a steady request rate allocates nothing
/// here. Stored properties are `@exclusivity(unchecked)`: the stream lives on one EventLoop and no
/// access to them overlaps another (each is a plain read or mutation, never held across a call
/// that could reach the same stream), and the dynamic checks cost more than the appends.
final class ServerStream {
    @exclusivity(unchecked) private(set) var streamID: Int32
    /// Sized for a typical APNs request (pseudo-headers, a JWT, a few apns-* headers) in one allocation.
    @exclusivity(unchecked) private var fields = HTTP2HeaderFields(capacity: 1024)
    /// Request body storage, kept across reuses; `hasBody` says whether this request has one.
    @exclusivity(unchecked) private var body: ByteBuffer?
    @exclusivity(unchecked) private var hasBody = false
    @exclusivity(unchecked) private var pathNeverIndexed = false
    @exclusivity(unchecked) var delivered = false
    /// The request was moved out to the delegate (after `delivered`, before the stream may be reused).
    @exclusivity(unchecked) private(set) var taken = false
    @exclusivity(unchecked) var responded = false
    @exclusivity(unchecked) var responseBody: ByteBuffer?

    init(streamID: Int32) {
        self.streamID = streamID
    }

    /// Makes a closed stream new for `streamID`. Storage the last request still shares (a
    /// delegate kept it) is replaced, not overwritten.
    func reuse(streamID: Int32) {
        self.streamID = streamID
        fields.removeAll()
        if hasBody { body!.clear() }
        hasBody = false
        pathNeverIndexed = false
        delivered = false
        taken = false
        responded = false
        responseBody = nil
    }

    /// Records one received field. Names arrive lowercase (nghttp2 rejects others).
    func received(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, neverIndex: Bool) {
        // ":path" is the only 5-byte name starting with ':' nghttp2 lets through.
        if name.count == 5, name[0] == UInt8(ascii: ":") { pathNeverIndexed = neverIndex }
        fields.append(name: name, value: value, neverIndex: neverIndex, lowercasing: false)
    }

    func receivedBody(_ bytes: UnsafeRawBufferPointer, allocator: ByteBufferAllocator) {
        if body == nil { body = allocator.buffer(capacity: max(bytes.count, 256)) }
        hasBody = true
        body!.writeBytes(bytes)
    }

    /// The assembled request, sharing this stream's storage until the stream is reused (copy on write).
    func takeRequest() -> HTTP2ServerRequest {
        taken = true
        return HTTP2ServerRequest(
            streamID: streamID, fields: fields, body: hasBody ? body : nil, pathNeverIndexed: pathNeverIndexed)
    }

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
