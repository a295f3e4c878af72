import NIOCore

/// One client stream between submit and completion: the request body still to send and the
/// response being assembled.
///
/// A class, so the handler's callbacks (several per stream) mutate it through a reference found
/// with one dictionary lookup instead of moving the whole value out of the dictionary and back.
/// Confined to the handler's event loop, like the handler.
final class ClientStream {
    /// Who hears of the outcome: a promise, or the delegate with the submitter's tag (no promise,
    /// no callback closure: the cheaper path for a pool that already keeps a request object).
    enum Completion {
        case promise(EventLoopPromise<HTTP2Response>)
        case tag(AnyObject)
    }

    var completion: Completion
    var requestBody: ByteBuffer?
    var headersSent = false
    var responseEnded = false
    var status = 0
    var headers = HTTP2ResponseHeaders()
    var body: ByteBuffer?

    init(completion: Completion, requestBody: ByteBuffer?) {
        self.completion = completion
        self.requestBody = requestBody
    }

    /// Copies the next request body bytes into nghttp2's buffer.
    func readBody(into buffer: UnsafeMutableRawBufferPointer) -> (count: Int, end: Bool) {
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
