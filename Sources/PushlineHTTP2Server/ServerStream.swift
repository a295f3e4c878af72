import NIOCore
import PushlineHTTP2

/// One server stream: the request being assembled, then the response body still to send.
///
/// A class: nghttp2 reports a request header by header, and mutating a struct stored in the
/// streams dictionary for each one cost a fifth of the server's time. Headers are kept as bytes
/// (one buffer per request, no `String` per field) until the delegate asks for them.
///
/// The handler reuses streams once closed (`reuse`), and their request storage (headers and body
/// buffers) as soon as the request has been delivered (`releaseStorage`): the next stream then
/// writes into memory that was just used, still in cache, and a steady request rate allocates
/// nothing here. Storage the delegate kept is replaced on reuse, not overwritten (copy on write). Stored properties are `@exclusivity(unchecked)`: the stream lives on one EventLoop and no
/// access to them overlaps another (each is a plain read or mutation, never held across a call
/// that could reach the same stream), and the dynamic checks cost more than the appends.
final class ServerStream {
    @exclusivity(unchecked) private(set) var streamID: Int32
    /// Nil once `releaseStorage` gave the buffers away.
    @exclusivity(unchecked) private var storage: Storage?
    @exclusivity(unchecked) private var hasBody = false
    @exclusivity(unchecked) private var pathNeverIndexed = false
    @exclusivity(unchecked) var delivered = false
    /// The request was moved out to the delegate (after `delivered`, before the stream may be reused).
    @exclusivity(unchecked) private(set) var taken = false
    @exclusivity(unchecked) var responded = false
    @exclusivity(unchecked) var responseBody: ByteBuffer?

    /// A request's buffers: header fields and body.
    struct Storage {
        var fields: HTTP2HeaderFields
        var body: ByteBuffer?

        /// Sized for a typical APNs request (pseudo-headers, a JWT, a few apns-* headers).
        init() {
            fields = HTTP2HeaderFields(capacity: 1024)
        }

        /// Empties both buffers, keeping their memory unless a delegate still shares it.
        mutating func clear() {
            fields.removeAll()
            if body != nil { body!.clear() }
        }
    }

    init(streamID: Int32, storage: consuming Storage?) {
        self.streamID = streamID
        self.storage = storage ?? Storage()
    }

    /// Makes a closed stream new for `streamID`, with `storage` (else its own buffers, or new ones).
    func reuse(streamID: Int32, storage: consuming Storage?) {
        self.streamID = streamID
        if let storage {
            self.storage = storage
        } else if self.storage != nil {
            self.storage!.clear()
        } else {
            self.storage = Storage()
        }
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
        storage!.fields.append(name: name, value: value, neverIndex: neverIndex, lowercasing: false)
    }

    func receivedBody(_ bytes: UnsafeRawBufferPointer, allocator: ByteBufferAllocator) {
        if storage!.body == nil { storage!.body = allocator.buffer(capacity: max(bytes.count, 256)) }
        hasBody = true
        storage!.body!.writeBytes(bytes)
    }

    /// The assembled request, sharing this stream's storage (copy on write).
    func takeRequest() -> HTTP2ServerRequest {
        taken = true
        return HTTP2ServerRequest(
            streamID: streamID,
            fields: storage!.fields,
            body: hasBody ? storage!.body : nil,
            pathNeverIndexed: pathNeverIndexed
        )
    }

    /// Gives up the request's buffers (once delivered, the stream needs only its response state),
    /// cleared for the next request.
    func releaseStorage() -> Storage {
        var released: Storage?
        swap(&released, &storage)
        released!.clear()
        return released!
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
