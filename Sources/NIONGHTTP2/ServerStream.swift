import NIOCore

/// One server stream: the request being assembled, then the response body still to send.
///
/// A class: nghttp2 reports a request header by header, and mutating a struct stored in the
/// streams dictionary for each one cost a fifth of the server's time.
final class ServerStream {
    var request: HTTP2ServerRequest
    var delivered = false
    var responded = false
    var responseBody: ByteBuffer?

    init(streamID: Int32) {
        request = HTTP2ServerRequest(streamID: streamID)
    }

    /// Moves the assembled request out (no reference counting): once delivered, the stream only
    /// needs its response state.
    func takeRequest() -> HTTP2ServerRequest {
        var taken = HTTP2ServerRequest(streamID: request.streamID)
        swap(&taken, &request)
        return taken
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
