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
    // hold open); without the HTTP/2 client's, the worker's CPU per notification was ×1.085 at 100
    // tokens per job, and ×1.100 without them all (docs/architecture.md, "Unsafe constructs on the hot path").
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

    /// One field of the response's header block: `:status` is parsed, other pseudo-headers are
    /// ignored, the rest are kept in order.
    func receivedHeader(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, neverIndex: Bool) {
        if name.first == UInt8(ascii: ":") {
            if Self.isStatus(name) { status = parseStatus(value) }
            return
        }
        headers.append(name: name, value: value, neverIndex: neverIndex)
    }

    /// `:status`, compared with one `memcmp`: `elementsEqual` against a `String`'s UTF-8 view went
    /// byte by byte through the generic iterator, 0.37% of the worker at one token per job.
    private static func isStatus(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        UnsafeRawBufferPointer(name).hasSameBytes(as: ":status")
    }

    /// What the stream ends with once nghttp2 closed it with `errorCode`: its response when one
    /// arrived whole, or why there is none (`receivedGoAway`: the server's GOAWAY, if any, read
    /// only then).
    func outcome(
        streamID: Int32,
        errorCode: HTTP2ErrorCode,
        receivedGoAway: @autoclosure () -> HTTP2GoAway?
    ) -> Result<HTTP2Response, HTTP2StreamError> {
        if responseEnded && status != 0 {
            return .success(HTTP2Response(streamID: streamID, status: status, headers: headers, body: body))
        }
        let receivedGoAway = receivedGoAway()
        let kind: HTTP2StreamError.Kind
        if headersSent, let code = Self.blamingARequest(receivedGoAway) {
            // The server may have refused this very request, whatever its last stream id.
            kind = .connectionError(code)
        } else if let goAway = receivedGoAway, streamID > goAway.lastStreamID {
            kind = .goAway(lastStreamID: goAway.lastStreamID, errorCode: goAway.errorCode)
        } else if errorCode == .refusedStream {
            kind = .refused
        } else if !headersSent {
            kind = .notSent
        } else {
            kind = .reset(errorCode)
        }
        return .failure(HTTP2StreamError(kind, streamID: streamID))
    }

    /// Why the stream, still open when the connection ended, has no response.
    func connectionEndedError(streamID: Int32, receivedGoAway: HTTP2GoAway?) -> HTTP2StreamError {
        let kind: HTTP2StreamError.Kind
        if !headersSent {
            kind = .notSent
        } else if let code = Self.blamingARequest(receivedGoAway) {
            kind = .connectionError(code)
        } else {
            kind = .connectionClosed
        }
        return HTTP2StreamError(kind, streamID: streamID)
    }

    /// The error code of the GOAWAY received, when it is one a request's bytes can cause: every
    /// sent and unanswered stream then ends `connectionError`, not as if it were innocent.
    private static func blamingARequest(_ goAway: HTTP2GoAway?) -> HTTP2ErrorCode? {
        goAway.map(\.errorCode).flatMap { $0.mayBlameARequest ? $0 : nil }
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

/// Parses an HTTP status code from ASCII digits; 0 when malformed.
func parseStatus(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
    guard bytes.count == 3 else { return 0 }
    var value = 0
    for byte in bytes {
        guard byte >= 48 && byte <= 57 else { return 0 }
        value = value * 10 + Int(byte - 48)
    }
    return value
}
