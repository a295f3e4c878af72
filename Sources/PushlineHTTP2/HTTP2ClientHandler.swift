import CNGHTTP2
import NIOCore

/// The client side of one HTTP/2 connection over nghttp2, as the last inbound handler of a
/// channel whose lower handlers pass plaintext `ByteBuffer`s (TCP directly for h2c, or TLS).
///
/// Every method must be called on the channel's EventLoop. Submits are queued in nghttp2 and leave
/// in one write per event-loop tick (`NGHTTP2Output`).
///
/// Stream limits: nghttp2 itself holds back requests beyond the peer's
/// SETTINGS_MAX_CONCURRENT_STREAMS and sends them as streams finish. A pool must NOT rely on that
/// (requests would wait inside a throttled connection): submit only while `availableStreams > 0`.
///
/// Who owns what: the streams in flight are `streams` (`ClientStreamTable`, the one count);
/// the peer's limit and whether nghttp2 takes new requests are asked of nghttp2; what it cannot
/// answer is `capacity` (`ClientStreamCapacity`); the connection's end and its writes are
/// `output` (`NGHTTP2Output`, shared with the server handler).
public final class HTTP2ClientHandler: ChannelInboundHandler {
    public typealias InboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    public let configuration: HTTP2ClientConfiguration
    @exclusivity(unchecked) public var delegate: (any HTTP2ClientDelegate)?

    private let session: NGHTTP2Session
    private let output: NGHTTP2Output
    /// Completions and connection events, delivered outside nghttp2.
    private let events = ClientEventQueue()
    // `@exclusivity(unchecked)`: confined to one event loop and never accessed re-entrantly (the
    // nghttp2 callbacks run inside our calls into the session, but touch no property those calls
    // hold open); without the HTTP/2 client's, the worker's CPU per notification was ×1.085 at 100
    // tokens per job, and ×1.100 without them all (docs/architecture.md, "Unsafe constructs on the hot path").
    @exclusivity(unchecked) private var streams = ClientStreamTable()
    @exclusivity(unchecked) private var capacity = ClientStreamCapacity()
    @exclusivity(unchecked) private var pings = PingTracker()

    /// The GOAWAY received from the server, if any.
    public private(set) var receivedGoAway: HTTP2GoAway?

    public init(configuration: HTTP2ClientConfiguration = .init(), delegate: (any HTTP2ClientDelegate)? = nil) {
        self.configuration = configuration
        self.delegate = delegate
        do {
            session = try NGHTTP2Session(
                role: .client,
                peerMaxConcurrentStreams: configuration.assumedPeerMaxConcurrentStreams,
                installCallbacks: installNGHTTP2ClientCallbacks
            )
        } catch {
            // nghttp2_session_client_new2 and nghttp2_option_new fail only when out of memory.
            fatalError("cannot create an nghttp2 client session: \(error)")
        }
        output = NGHTTP2Output(session: session)
        session.events = self
        session.owner = Unmanaged.passUnretained(self).toOpaque()
        output.owner = self
    }

    deinit {
        // Streams still open when the handler goes (it never saw the channel close): the table's
        // references are let go with it.
        streams.releaseAll()
    }

    // MARK: What a pool reads

    /// The channel's EventLoop, once the handler is in a pipeline.
    public var eventLoop: (any EventLoop)? { output.context?.eventLoop }

    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS (the assumed value until its SETTINGS arrive),
    /// as nghttp2 applies it.
    public var peerMaxConcurrentStreams: Int { Int(session.remoteMaxConcurrentStreams) }
    /// Whether the server's first SETTINGS frame has arrived.
    public var peerSettingsReceived: Bool { capacity.announcedPeerLimit != nil }
    /// Streams whose HEADERS were sent and that are not finished.
    public var openStreams: Int { streams.sentCount }
    /// How many more requests may be submitted now without waiting inside this connection
    /// (peer limit minus in-flight; 0 after GOAWAY or close).
    public var availableStreams: Int {
        ClientStreamCapacity.availableStreams(peerLimit: peerMaxConcurrentStreams, inFlight: streams.count, refusal: refusal)
    }
    /// False after GOAWAY (either way) or close: submits fail with `.connectionUnavailable`.
    public var isAcceptingStreams: Bool { refusal == nil && output.context != nil }

    private var refusal: ClientStreamCapacity.Refusal? {
        capacity.refusal(
            ended: output.ended,
            requestAllowed: session.requestAllowed,
            receivedGoAwayLastStreamID: receivedGoAway?.lastStreamID,
            streamIDsExhausted: session.streamIDsExhausted
        )
    }

    // MARK: Requests

    /// Submits a request; `promise` completes with the response or an `HTTP2StreamError`.
    /// Returns the stream id (for `cancel`), or nil when the submit failed (promise already failed).
    @discardableResult
    public func submit(_ request: HTTP2Request, promise: EventLoopPromise<HTTP2Response>) -> Int32? {
        do {
            return try submit(request, completion: .promise(promise))
        } catch {
            promise.fail(error)
            return nil
        }
    }

    /// Submits a request whose header block `writeHeaders` writes straight into the session's
    /// reused block (`:method`, `:scheme`, `:authority` and `:path` first, then the regular
    /// fields), with `body` (read in place as nghttp2 sends it; nil or empty for none); its
    /// outcome goes to the delegate's `http2Client(_:completed:result:)` with `tag`. Returns the
    /// stream id (for `cancel`); throws when the request cannot be submitted (the delegate then
    /// hears nothing of it). Nothing is built per request but the fields' bytes.
    public func submit(
        tag: HTTP2StreamTag,
        body: HTTP2RequestBody?,
        writeHeaders: (inout HTTP2HeaderBlock) -> Void
    ) throws(HTTP2StreamError) -> Int32 {
        try submit(body: body, completion: .tag(tag)) { hasBody in
            session.submitRequest(hasBody: hasBody, writeHeaders: writeHeaders)
        }
    }

    private func submit(_ request: HTTP2Request, completion: ClientStream.Completion) throws(HTTP2StreamError) -> Int32 {
        try submit(body: request.body.map(HTTP2RequestBody.buffer), completion: completion) { hasBody in
            session.submitRequest(request, hasBody: hasBody)
        }
    }

    private func submit(
        body: HTTP2RequestBody?,
        completion: ClientStream.Completion,
        submitToSession: (_ hasBody: Bool) -> Int32
    ) throws(HTTP2StreamError) -> Int32 {
        if output.context == nil {
            throw HTTP2StreamError(.connectionUnavailable("handler not in a pipeline or connection closed"), streamID: nil)
        }
        if let refusal {
            throw HTTP2StreamError(.connectionUnavailable(refusal.description), streamID: nil)
        }
        let body = body.flatMap { $0.isEmpty ? nil : $0 }
        let streamID = submitToSession(body != nil)
        guard streamID > 0 else {
            let reason: HTTP2StreamError.Kind =
                streamID == Int32(NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE.rawValue)
                ? .connectionUnavailable(ClientStreamCapacity.Refusal.streamIDsExhausted.description)
                : .library(code: streamID, message: String(cString: nghttp2_strerror(streamID)))
            throw HTTP2StreamError(reason, streamID: nil)
        }
        streams.add(streamID, completion: completion, requestBody: body)
        output.needsDrain()
        return streamID
    }

    /// Submits a request; the future completes on the channel's EventLoop.
    public func submit(_ request: HTTP2Request) -> EventLoopFuture<HTTP2Response> {
        guard let context = output.context else {
            preconditionFailure("HTTP2ClientHandler.submit(_:) before the handler was added to a pipeline")
        }
        let promise = context.eventLoop.makePromise(of: HTTP2Response.self)
        submit(request, promise: promise)
        return promise.futureResult
    }

    /// Whether the stream with this id is still open (submitted and not yet ended).
    public func isOpen(streamID: Int32) -> Bool {
        streams.contains(streamID)
    }

    /// Resets the stream with RST_STREAM CANCEL (e.g. a request deadline passed): it ends at once
    /// with `.cancelled` (promise failed, or the delegate told) and its slot counts as free.
    /// Unknown ids are ignored.
    public func cancel(streamID: Int32) {
        guard let stream = streams.take(streamID) else { return }
        try? session.submitReset(streamID: streamID, errorCode: .cancel)
        output.needsDrain()
        complete(stream.completion, .failure(HTTP2StreamError(.cancelled, streamID: streamID)))
        delegate?.http2ClientStreamsFinished(self)
    }

    /// Tells the submitter of a stream how it ended.
    func complete(_ completion: ClientStream.Completion, _ result: Result<HTTP2Response, HTTP2StreamError>) {
        switch completion {
        case .promise(let promise): promise.completeWith(result.mapError { $0 as any Error })
        case .tag(let tag): delegate?.http2Client(self, completed: tag, result: result)
        case .none: break
        }
    }

    // MARK: Connection control

    /// Sends a PING; the future yields the round-trip time (it fails if the connection ended).
    public func ping() -> EventLoopFuture<TimeAmount> {
        guard let context = output.context else {
            preconditionFailure("HTTP2ClientHandler.ping() before the handler was added to a pipeline")
        }
        if output.ended { return context.eventLoop.makeFailedFuture(HTTP2StreamError(.connectionClosed, streamID: nil)) }
        defer { output.needsDrain() }
        return pings.send(on: session, eventLoop: context.eventLoop)
    }

    /// The polite close (RFC 9113 §6.8: an endpoint SHOULD send GOAWAY before closing): queues
    /// GOAWAY and stops new streams at once (`isAcceptingStreams` turns false, submits fail).
    /// Streams already submitted run to their end; once none is open, nghttp2 wants neither to
    /// read nor to write, and the handler closes the connection itself right after writing the
    /// GOAWAY (TLS sends it before its close_notify). To bound the wait, close the channel.
    ///
    /// The last-stream-id is the last stream the server opened that we processed: 0 against APNs,
    /// which opens none. Only the first call queues a frame; returns whether this one did.
    @discardableResult
    public func goAway(errorCode: HTTP2ErrorCode = .noError, debugData: ByteBuffer = ByteBuffer()) -> Bool {
        guard let context = output.context, !output.ended else { return false }
        // Before the frame leaves: a submit in this tick must not open a stream behind it.
        guard capacity.queueGoAway() else { return false }
        do {
            try session.submitGoAway(lastStreamID: session.lastProcessedStreamID, errorCode: errorCode, debugData: debugData)
            // Written in its own tick (never from inside a delegate call of this handler).
            output.needsDrain()
            return true
        } catch {
            context.fireErrorCaught(error)
            return false
        }
    }

    // MARK: ChannelHandler

    public func handlerAdded(context: ChannelHandlerContext) {
        output.handlerAdded(context: context)
        if context.channel.isActive { start() }
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        connectionEnded()
        output.handlerRemoved()
    }

    public func channelActive(context: ChannelHandlerContext) {
        start()
        context.fireChannelActive()
    }

    public func channelInactive(context: ChannelHandlerContext) {
        connectionEnded()
        context.fireChannelInactive()
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        output.readStarted()
        do {
            try session.receive(bytes)
        } catch {
            output.fail(error)
            return
        }
        events.run(for: self)
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        output.readCompleted()
        context.fireChannelReadComplete()
    }

    private func start() {
        output.start(
            settings: [
                (NGHTTP2_SETTINGS_ENABLE_PUSH, 0),
                (NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, configuration.initialWindowSize),
                (NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1),
            ],
            connectionWindow: configuration.connectionWindowSize
        )
    }

    // MARK: Ending streams

    /// The channel went inactive or the handler left the pipeline: every stream and ping fails,
    /// once, and nothing is written after this.
    private func connectionEnded() {
        guard output.connectionEnded() else { return }
        let open = streams.takeAll()
        for (streamID, stream) in open {
            complete(stream.completion, .failure(stream.connectionEndedError(streamID: streamID, receivedGoAway: receivedGoAway)))
        }
        if !open.isEmpty { events.streamsEnded() }
        for promise in pings.drainAll() {
            promise.fail(HTTP2StreamError(.connectionClosed, streamID: nil))
        }
        events.run(for: self)
        delegate?.http2ClientClosed(self)
    }

    /// Ends a stream nghttp2 is done with: frees its slot and queues its outcome, which `result`
    /// makes from what the stream received. Unknown ids are ignored.
    private func end(_ streamID: Int32, _ result: (ClientStream) -> Result<HTTP2Response, HTTP2StreamError>) {
        guard let stream = streams.take(streamID) else { return }
        events.streamsEnded()
        events.append(.completed(stream.takeCompletion(), result(stream)))
        streams.recycle(stream)
    }

    /// Fails the streams nghttp2 still holds back: after a GOAWAY they will never be sent.
    private func failUnsent(_ goAway: HTTP2GoAway) {
        for streamID in streams.unsentStreamIDs {
            end(streamID) { _ in
                .failure(HTTP2StreamError(.goAway(lastStreamID: goAway.lastStreamID, errorCode: goAway.errorCode), streamID: streamID))
            }
        }
    }
}

@available(*, unavailable)
extension HTTP2ClientHandler: Sendable {}

extension HTTP2ClientHandler: NGHTTP2OutputOwner {
    package func outputFlushed() {
        events.run(for: self)
    }
}

extension HTTP2ClientHandler: NGHTTP2SessionEvents {
    package func sessionBeginHeaders(streamID: Int32, isRequest: Bool) throws {}

    package func sessionHeader(
        streamID: Int32,
        name: UnsafeBufferPointer<UInt8>,
        value: UnsafeBufferPointer<UInt8>,
        neverIndex: Bool
    ) throws {
        streams.with(streamID) { $0.receivedHeader(name: name, value: value, neverIndex: neverIndex) }
    }

    package func sessionData(streamID: Int32, bytes: UnsafeRawBufferPointer) throws {
        guard let context = output.context else { return }
        streams.with(streamID) { stream in
            if stream.body == nil {
                stream.body = context.channel.allocator.buffer(capacity: bytes.count)
            }
            stream.body!.writeBytes(bytes)
        }
    }

    package func sessionFrameReceived(_ frame: NGHTTP2Frame) throws {
        switch frame {
        case .headers(let streamID, true, _), .data(let streamID, true):
            streams.with(streamID) { $0.responseEnded = true }
        case .settings(ack: false, _):
            let value = peerMaxConcurrentStreams
            if capacity.peerSettingsApplied(maxConcurrentStreams: value) {
                events.streamsEnded()
                events.append(.peerMaxChanged(value))
            }
        case .ping(ack: true, let opaque):
            if let (promise, rtt) = pings.acked(opaque, at: .now()) { events.append(.pong(promise, rtt)) }
        case .goAway(let goAway):
            receivedGoAway = goAway
            events.append(.goAwayReceived(goAway))
            failUnsent(goAway)
        default:
            break
        }
    }

    package func sessionFrameSent(_ frame: NGHTTP2Frame) throws {
        switch frame {
        case .headers(let streamID, _, true):
            streams.with(streamID) { $0.headersSent = true }
        case .goAway(let goAway):
            events.append(.goAwaySent(goAway))
        default:
            break
        }
    }

    package func sessionFrameNotSent(_ frame: NGHTTP2Frame, libraryError: Int32) throws {
        guard case .headers(let streamID, _, true) = frame else { return }
        let kind: HTTP2StreamError.Kind =
            receivedGoAway.map { .goAway(lastStreamID: $0.lastStreamID, errorCode: $0.errorCode) } ?? .notSent
        end(streamID) { _ in .failure(HTTP2StreamError(kind, streamID: streamID)) }
    }

    package func sessionInvalidFrame(_ frame: NGHTTP2Frame, libraryError: Int32) throws {}

    package func sessionStreamClosed(streamID: Int32, errorCode: HTTP2ErrorCode) throws {
        end(streamID) { $0.outcome(streamID: streamID, errorCode: errorCode, receivedGoAway: receivedGoAway) }
    }

    package func sessionReadBody(streamID: Int32, into buffer: UnsafeMutableRawBufferPointer) throws -> (count: Int, end: Bool) {
        streams.with(streamID) { $0.readBody(into: buffer) } ?? (0, true)
    }
}
