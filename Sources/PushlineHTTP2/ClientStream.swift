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
    /// The request body still to send (nil when there is none or all of it was read), and how
    /// many of its bytes nghttp2 has read so far.
    @exclusivity(unchecked) var requestBody: HTTP2RequestBody?
    @exclusivity(unchecked) var requestBodySent = 0
    @exclusivity(unchecked) var headersSent = false
    @exclusivity(unchecked) var responseEnded = false
    @exclusivity(unchecked) var status = 0
    @exclusivity(unchecked) var headers = HTTP2ResponseHeaders()
    @exclusivity(unchecked) var body: ByteBuffer?

    init(completion: Completion, requestBody: HTTP2RequestBody?) {
        self.completion = completion
        self.requestBody = requestBody
    }

    /// An ended stream lets go of its submitter, request and response body (its header storage
    /// is emptied and kept by `reuse`).
    /// Moves the completion out, leaving `.none`: the taker gets it without a retain, and
    /// `recycle` has nothing to release.
    func takeCompletion() -> Completion {
        var taken = Completion.none
        swap(&taken, &completion)
        return taken
    }

    func recycle() {
        completion = .none
        requestBody = nil
        requestBodySent = 0
        body = nil
    }

    /// A recycled stream starts over for a new request.
    func reuse(completion: Completion, requestBody: HTTP2RequestBody?) {
        self.completion = completion
        self.requestBody = requestBody
        requestBodySent = 0
        headersSent = false
        responseEnded = false
        status = 0
        // Emptied here rather than in `recycle`: by now the response that shared the storage has
        // been delivered and let go, so the storage is this stream's alone and is kept.
        headers.removeAll()
    }

    /// Copies the next request body bytes into nghttp2's buffer (as many as fit: the rest waits
    /// for its next call, e.g. after a WINDOW_UPDATE), straight from the body's own storage.
    func readBody(into buffer: UnsafeMutableRawBufferPointer) -> (count: Int, end: Bool) {
        guard let requestBody else { return (0, true) }
        let count = requestBody.copyBytes(from: requestBodySent, into: buffer)
        requestBodySent += count
        let end = requestBodySent == requestBody.count
        if end {
            self.requestBody = nil
            requestBodySent = 0
        }
        return (count, end)
    }
}
