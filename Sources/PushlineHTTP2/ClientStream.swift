import NIOCore

/// One client stream between submit and completion: the request body still to send and the
/// response being assembled.
///
/// A class, so the handler's callbacks (several per stream) mutate it through a reference found
/// with one `StreamTable` lookup instead of moving the whole value out of the table and back.
/// Confined to the handler's event loop, like the handler, which reuses ended ones for later
/// requests (`recycle`, `reuse`): one object fewer to allocate and free per request.
final class ClientStream {
    /// Who hears of the outcome: a promise, or the delegate with the submitter's tag (no promise,
    /// no callback closure: the cheaper path for a pool that already keeps a request object).
    enum Completion {
        case promise(EventLoopPromise<HTTP2Response>)
        case tag(HTTP2StreamTag)
        /// A recycled stream's: it holds on to nobody.
        case none
    }

    // `@exclusivity(unchecked)`: confined to one event loop and never accessed re-entrantly (the
    // nghttp2 callbacks run inside our calls into the session, but touch no property those calls
    // hold open); their run-time checks were ~1.8% of the worker's CPU (docs/architecture.md).
    @exclusivity(unchecked) var completion: Completion
    @exclusivity(unchecked) var requestBody: ByteBuffer?
    @exclusivity(unchecked) var headersSent = false
    @exclusivity(unchecked) var responseEnded = false
    @exclusivity(unchecked) var status = 0
    @exclusivity(unchecked) var headers = HTTP2ResponseHeaders()
    @exclusivity(unchecked) var body: ByteBuffer?

    init(completion: Completion, requestBody: ByteBuffer?) {
        self.completion = completion
        self.requestBody = requestBody
    }

    /// An ended stream lets go of its submitter, request and response body (its header storage
    /// is emptied and kept by `reuse`).
    func recycle() {
        completion = .none
        requestBody = nil
        body = nil
    }

    /// A recycled stream starts over for a new request.
    func reuse(completion: Completion, requestBody: ByteBuffer?) {
        self.completion = completion
        self.requestBody = requestBody
        headersSent = false
        responseEnded = false
        status = 0
        // Emptied here rather than in `recycle`: by now the response that shared the storage has
        // been delivered and let go, so the storage is this stream's alone and is kept.
        headers.removeAll()
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
