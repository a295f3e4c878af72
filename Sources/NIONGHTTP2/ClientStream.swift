import NIOCore

/// One client stream between submit and completion: the request body still to send and the
/// response being assembled.
struct ClientStream {
    var promise: EventLoopPromise<HTTP2Response>
    var requestBody: ByteBuffer?
    var headersSent = false
    var responseEnded = false
    var status = 0
    var headers: [HTTP2Header] = []
    var body: ByteBuffer?

    init(promise: EventLoopPromise<HTTP2Response>, requestBody: ByteBuffer?) {
        self.promise = promise
        self.requestBody = requestBody
    }

    /// Copies the next request body bytes into nghttp2's buffer.
    mutating func readBody(into buffer: UnsafeMutableRawBufferPointer) -> (count: Int, end: Bool) {
        guard requestBody != nil else { return (0, true) }
        let count = requestBody!.readWithUnsafeReadableBytes { bytes in
            let count = min(bytes.count, buffer.count)
            if count > 0 { buffer.baseAddress!.copyMemory(from: bytes.baseAddress!, byteCount: count) }
            return count
        }
        let end = requestBody!.readableBytes == 0
        if end { requestBody = nil }
        return (count, end)
    }
}
