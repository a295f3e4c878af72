import CNGHTTP2
import NIOCore

/// The client side of one HTTP/2 connection over nghttp2, as the last inbound handler of a
/// channel whose lower handlers pass plaintext `ByteBuffer`s (TCP directly for h2c, or TLS).
///
/// Every method must be called on the channel's EventLoop. Submits are queued in nghttp2 and leave
/// in one write per event-loop tick (see `WriteCoalescer`).
///
/// Stream limits: nghttp2 itself holds back requests beyond the peer's
/// SETTINGS_MAX_CONCURRENT_STREAMS and sends them as streams finish. A pool must NOT rely on that
/// (requests would wait inside a throttled connection): submit only while `availableStreams > 0`.
public final class HTTP2ClientHandler: ChannelInboundHandler {
    public typealias InboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    private enum Deferred {
        case completed(ClientStream.Completion, Result<HTTP2Response, HTTP2StreamError>)
        case pong(EventLoopPromise<TimeAmount>, TimeAmount)
        case peerMaxChanged(Int)
        case goAwayReceived(HTTP2GoAway)
        case goAwaySent(HTTP2GoAway)
    }

    public let configuration: HTTP2ClientConfiguration
    @exclusivity(unchecked) public var delegate: (any HTTP2ClientDelegate)?

    private let session: NGHTTP2Session
    // `@exclusivity(unchecked)`: confined to one event loop and never accessed re-entrantly (the
    // nghttp2 callbacks run inside our calls into the session, but touch no property those calls
    // hold open); their run-time checks were ~1.8% of the worker's CPU (docs/architecture.md).
    @exclusivity(unchecked) private var context: ChannelHandlerContext?
    @exclusivity(unchecked) private var started = false
    /// Open streams by id, each retained once by the table (`Unmanaged`: retained on insert,
    /// released when taken out), so the lookups of nghttp2's callbacks cost no reference counting.
    @exclusivity(unchecked) private var streams = StreamTable<Unmanaged<ClientStream>>()
    /// Ended streams kept for reuse (`ClientStream.recycle`), at most `maxSpareStreams`.
    @exclusivity(unchecked) private var spareStreams: [ClientStream] = []
    private static let maxSpareStreams = 1024
    @exclusivity(unchecked) private var capacity: ClientStreamCapacity
    @exclusivity(unchecked) private var coalescer = WriteCoalescer()
    @exclusivity(unchecked) private var pings = PingTracker()
    @exclusivity(unchecked) private var deferred = MoveQueue<Deferred>()
    /// `runDeferred`'s emptied queue, kept for its storage (nil while a run has it).
    @exclusivity(unchecked) private var spareDeferred: MoveQueue<Deferred>? = MoveQueue<Deferred>()
    @exclusivity(unchecked) private var capacityFreed = false
    /// `goAway` queued our GOAWAY (it is sent once).
    private var goAwayQueued = false

    /// The GOAWAY received from the server, if any.
    public private(set) var receivedGoAway: HTTP2GoAway?

    public init(configuration: HTTP2ClientConfiguration = .init(), delegate: (any HTTP2ClientDelegate)? = nil) {
        self.configuration = configuration
        self.delegate = delegate
        self.capacity = ClientStreamCapacity(assumedPeerMaxConcurrentStreams: Int(configuration.assumedPeerMaxConcurrentStreams))
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
        session.events = self
        session.owner = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        // Streams still open when the handler goes (it never saw the channel close): the table's
        // references are let go with it.
        for (_, stream) in streams.entries { stream.release() }
    }

    // MARK: What a pool reads

    /// The channel's EventLoop, once the handler is in a pipeline.
    public var eventLoop: (any EventLoop)? { context?.eventLoop }

    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS (the assumed value until its SETTINGS arrive).
    public var peerMaxConcurrentStreams: Int { capacity.peerMaxConcurrentStreams }
    /// Whether the server's first SETTINGS frame has arrived.
    public var peerSettingsReceived: Bool { capacity.peerSettingsReceived }
    /// Streams whose HEADERS were sent and that are not finished.
    public var openStreams: Int { capacity.open }
    /// How many more requests may be submitted now without waiting inside this connection
    /// (peer limit minus in-flight; 0 after GOAWAY or close).
    public var availableStreams: Int { capacity.availableStreams }
    /// False after GOAWAY (either way) or close: submits fail with `.connectionUnavailable`.
    public var isAcceptingStreams: Bool { capacity.rejectionReason == nil && context != nil }

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
        if context == nil {
            throw HTTP2StreamError(.connectionUnavailable("handler not in a pipeline or connection closed"), streamID: nil)
        }
        if let reason = capacity.submit() {
            throw HTTP2StreamError(.connectionUnavailable(reason), streamID: nil)
        }
        let body = body.flatMap { $0.isEmpty ? nil : $0 }
        let streamID = submitToSession(body != nil)
        guard streamID > 0 else {
            capacity.streamFinished(wasSent: false)
            let reason: HTTP2StreamError.Kind =
                streamID == Int32(NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE.rawValue)
                ? .connectionUnavailable("stream ids exhausted")
                : .library(code: streamID, message: String(cString: nghttp2_strerror(streamID)))
            throw HTTP2StreamError(reason, streamID: nil)
        }
        let stream: ClientStream
        if let spare = spareStreams.popLast() {
            spare.reuse(completion: completion, requestBody: body)
            stream = spare
        } else {
            stream = ClientStream(completion: completion, requestBody: body)
        }
        streams.insert(Unmanaged.passRetained(stream), for: streamID)
        needsDrain()
        return streamID
    }

    /// Submits a request; the future completes on the channel's EventLoop.
    public func submit(_ request: HTTP2Request) -> EventLoopFuture<HTTP2Response> {
        guard let context else {
            preconditionFailure("HTTP2ClientHandler.submit(_:) before the handler was added to a pipeline")
        }
        let promise = context.eventLoop.makePromise(of: HTTP2Response.self)
        submit(request, promise: promise)
        return promise.futureResult
    }

    /// Whether the stream with this id is still open (submitted and not yet ended).
    public func isOpen(streamID: Int32) -> Bool {
        streams[streamID] != nil
    }

    /// Resets the stream with RST_STREAM CANCEL (e.g. a request deadline passed): it ends at once
    /// with `.cancelled` (promise failed, or the delegate told) and its slot counts as free.
    /// Unknown ids are ignored.
    public func cancel(streamID: Int32) {
        guard let stream = takeStream(streamID) else { return }
        capacity.streamFinished(wasSent: stream.headersSent)
        try? session.submitReset(streamID: streamID, errorCode: .cancel)
        needsDrain()
        complete(stream.completion, .failure(HTTP2StreamError(.cancelled, streamID: streamID)))
        delegate?.http2ClientStreamsFinished(self)
    }

    /// Runs `body` with the open stream `streamID` (nil when there is none), borrowing the
    /// table's reference instead of retaining it.
    private func withStream<R>(_ streamID: Int32, _ body: (ClientStream) -> R) -> R? {
        streams[streamID]?._withUnsafeGuaranteedRef(body)
    }

    /// Takes stream `streamID` out of the table, with the table's reference.
    private func takeStream(_ streamID: Int32) -> ClientStream? {
        streams.removeValue(forKey: streamID)?.takeRetainedValue()
    }

    private func complete(_ completion: ClientStream.Completion, _ result: Result<HTTP2Response, HTTP2StreamError>) {
        switch completion {
        case .promise(let promise): promise.completeWith(result.mapError { $0 as any Error })
        case .tag(let tag): delegate?.http2Client(self, completed: tag, result: result)
        case .none: break
        }
    }

    // MARK: Connection control

    /// Sends a PING; the future yields the round-trip time.
    public func ping() -> EventLoopFuture<TimeAmount> {
        guard let context else { preconditionFailure("HTTP2ClientHandler.ping() before the handler was added to a pipeline") }
        let promise = context.eventLoop.makePromise(of: TimeAmount.self)
        let opaque = pings.start(at: .now(), promise: promise)
        do {
            try session.submitPing(opaque: opaque)
            needsDrain()
        } catch {
            _ = pings.acked(opaque, at: .now())
            promise.fail(error)
        }
        return promise.futureResult
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
        guard context != nil, !goAwayQueued, capacity.phase != .closed else { return false }
        goAwayQueued = true
        // Before the frame leaves: a submit in this tick must not open a stream behind it.
        capacity.goAwaySent()
        do {
            try session.submitGoAway(lastStreamID: session.lastProcessedStreamID, errorCode: errorCode, debugData: debugData)
            // Written in its own tick (never from inside a delegate call of this handler).
            needsDrain()
            return true
        } catch {
            context?.fireErrorCaught(error)
            return false
        }
    }

    // MARK: ChannelHandler

    public func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start() }
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        failEverything()
        self.context = nil
    }

    public func channelActive(context: ChannelHandlerContext) {
        start()
        context.fireChannelActive()
    }

    public func channelInactive(context: ChannelHandlerContext) {
        failEverything()
        context.fireChannelInactive()
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        coalescer.readStarted()
        do {
            try session.receive(bytes)
        } catch {
            fail(context: context, error)
            return
        }
        runDeferred()
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        coalescer.readCompleted()
        drain()
        context.fireChannelReadComplete()
    }

    // MARK: Writing

    private func start() {
        guard !started, let context else { return }
        started = true
        do {
            try session.submitSettings([
                (NGHTTP2_SETTINGS_ENABLE_PUSH, 0),
                (NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, configuration.initialWindowSize),
                (NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1),
            ])
            try session.setConnectionWindow(configuration.connectionWindowSize)
        } catch {
            fail(context: context, error)
            return
        }
        drain()
    }

    private func needsDrain() {
        guard started, case .scheduleDrain = coalescer.needsDrain(), let context else { return }
        context.eventLoop.assumeIsolated().execute {
            self.coalescer.scheduledDrainRuns()
            self.drain()
        }
    }

    /// One `mem_send` loop into one buffer, one write and one flush.
    private func drain() {
        guard started, let context else { return }
        let open: Bool
        do {
            open = try session.flushOutput(to: context)
        } catch {
            fail(context: context, error)
            return
        }
        runDeferred()
        if !open { context.close(promise: nil) }
    }

    private func fail(context: ChannelHandlerContext, _ error: any Error) {
        context.fireErrorCaught(error)
        context.close(promise: nil)
    }

    // MARK: Completing streams outside nghttp2

    private func runDeferred() {
        // Items are moved out, not copied: a completion holds the response and the caller's tag.
        // What the calls add meanwhile goes to `deferred` and runs in the next round. A run
        // started inside a call (`failEverything`) takes a queue of its own.
        var items = spareDeferred ?? MoveQueue<Deferred>()
        spareDeferred = nil
        while !deferred.isEmpty {
            swap(&items, &deferred)
            items.drain { item in
                switch item {
                case .completed(let completion, let result): complete(completion, result)
                case .pong(let promise, let rtt): promise.succeed(rtt)
                case .peerMaxChanged(let value): delegate?.http2Client(self, peerMaxConcurrentStreamsChanged: value)
                case .goAwayReceived(let goAway): delegate?.http2Client(self, goAwayReceived: goAway)
                case .goAwaySent(let goAway): delegate?.http2Client(self, goAwaySent: goAway)
                }
            }
        }
        spareDeferred = items
        if capacityFreed {
            capacityFreed = false
            delegate?.http2ClientStreamsFinished(self)
        }
    }

    /// The error code of the GOAWAY received, when it is one a request's bytes can cause: every
    /// sent and unanswered stream then ends `connectionError`, not as if it were innocent.
    private var goAwayBlamingARequest: HTTP2ErrorCode? {
        receivedGoAway.map(\.errorCode).flatMap { $0.mayBlameARequest ? $0 : nil }
    }

    private func failEverything() {
        guard capacity.phase != .closed else { return }
        capacity.closed()
        let open = streams.entries
        streams.removeAll()
        for (streamID, retained) in open {
            let stream = retained.takeRetainedValue()
            let kind: HTTP2StreamError.Kind
            if !stream.headersSent {
                kind = .notSent
            } else if let code = goAwayBlamingARequest {
                kind = .connectionError(code)
            } else {
                kind = .connectionClosed
            }
            complete(stream.completion, .failure(HTTP2StreamError(kind, streamID: streamID)))
        }
        if !open.isEmpty { capacityFreed = true }
        for promise in pings.drainAll() {
            promise.fail(HTTP2StreamError(.connectionClosed, streamID: nil))
        }
        runDeferred()
        delegate?.http2ClientClosed(self)
    }

    private func finish(streamID: Int32, with error: HTTP2StreamError.Kind) {
        end(streamID) { _ in .failure(HTTP2StreamError(error, streamID: streamID)) }
    }

    /// Ends a stream nghttp2 is done with: frees its slot and queues its outcome, which `result`
    /// makes from what the stream received. Unknown ids are ignored.
    private func end(_ streamID: Int32, _ result: (ClientStream) -> Result<HTTP2Response, HTTP2StreamError>) {
        guard let stream = takeStream(streamID) else { return }
        capacity.streamFinished(wasSent: stream.headersSent)
        capacityFreed = true
        deferred.append(.completed(stream.takeCompletion(), result(stream)))
        // Nothing looks a stream up but by its id, which is gone from `streams` now.
        if spareStreams.count < Self.maxSpareStreams {
            stream.recycle()
            spareStreams.append(stream)
        }
    }
}

@available(*, unavailable)
extension HTTP2ClientHandler: Sendable {}

extension HTTP2ClientHandler: NGHTTP2SessionEvents {
    package func sessionBeginHeaders(streamID: Int32, isRequest: Bool) throws {}

    package func sessionHeader(
        streamID: Int32,
        name: UnsafeBufferPointer<UInt8>,
        value: UnsafeBufferPointer<UInt8>,
        neverIndex: Bool
    ) throws {
        withStream(streamID) { stream in
            if name.first == UInt8(ascii: ":") {
                if Self.isStatus(name) { stream.status = parseStatus(value) }
                return
            }
            stream.headers.append(name: name, value: value, neverIndex: neverIndex)
        }
    }

    /// `:status`, compared with one `memcmp`: `elementsEqual` against a `String`'s UTF-8 view went
    /// byte by byte through the generic iterator, 0.37% of the worker at one token per job.
    private static func isStatus(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        UnsafeRawBufferPointer(name).hasSameBytes(as: ":status")
    }

    package func sessionData(streamID: Int32, bytes: UnsafeRawBufferPointer) throws {
        guard let context else { return }
        withStream(streamID) { stream in
            if stream.body == nil {
                stream.body = context.channel.allocator.buffer(capacity: bytes.count)
            }
            stream.body!.writeBytes(bytes)
        }
    }

    package func sessionFrameReceived(_ frame: NGHTTP2Frame) throws {
        switch frame {
        case .headers(let streamID, true, _), .data(let streamID, true):
            withStream(streamID) { $0.responseEnded = true }
        case .settings(ack: false, _):
            let value = Int(session.remoteMaxConcurrentStreams)
            if capacity.peerSettings(maxConcurrentStreams: value) {
                capacityFreed = true
                deferred.append(.peerMaxChanged(value))
            }
        case .ping(ack: true, let opaque):
            if let (promise, rtt) = pings.acked(opaque, at: .now()) { deferred.append(.pong(promise, rtt)) }
        case .goAway(let goAway):
            receivedGoAway = goAway
            capacity.goAwayReceived(lastStreamID: goAway.lastStreamID)
            deferred.append(.goAwayReceived(goAway))
            // Requests nghttp2 still holds back will never be sent now: fail them at once.
            let unsent = streams.entries.compactMap { entry in
                entry.value._withUnsafeGuaranteedRef { $0.headersSent } ? nil : entry.key
            }
            for streamID in unsent {
                finish(streamID: streamID, with: .goAway(lastStreamID: goAway.lastStreamID, errorCode: goAway.errorCode))
            }
        default:
            break
        }
    }

    package func sessionFrameSent(_ frame: NGHTTP2Frame) throws {
        switch frame {
        case .headers(let streamID, _, true):
            if withStream(streamID, { $0.headersSent = true }) != nil {
                capacity.headersSent()
            }
        case .goAway(let goAway):
            capacity.goAwaySent()
            deferred.append(.goAwaySent(goAway))
        default:
            break
        }
    }

    package func sessionFrameNotSent(_ frame: NGHTTP2Frame, libraryError: Int32) throws {
        guard case .headers(let streamID, _, true) = frame else { return }
        if let goAway = receivedGoAway {
            finish(streamID: streamID, with: .goAway(lastStreamID: goAway.lastStreamID, errorCode: goAway.errorCode))
        } else {
            finish(streamID: streamID, with: .notSent)
        }
    }

    package func sessionInvalidFrame(_ frame: NGHTTP2Frame, libraryError: Int32) throws {}

    package func sessionStreamClosed(streamID: Int32, errorCode: HTTP2ErrorCode) throws {
        end(streamID) { stream in
            if stream.responseEnded && stream.status != 0 {
                return .success(HTTP2Response(streamID: streamID, status: stream.status, headers: stream.headers, body: stream.body))
            }
            let kind: HTTP2StreamError.Kind
            if stream.headersSent, let code = goAwayBlamingARequest {
                // The server may have refused this very request, whatever its last stream id.
                kind = .connectionError(code)
            } else if let goAway = receivedGoAway, streamID > goAway.lastStreamID {
                kind = .goAway(lastStreamID: goAway.lastStreamID, errorCode: goAway.errorCode)
            } else if errorCode == .refusedStream {
                kind = .refused
            } else if !stream.headersSent {
                kind = .notSent
            } else {
                kind = .reset(errorCode)
            }
            return .failure(HTTP2StreamError(kind, streamID: streamID))
        }
    }

    package func sessionReadBody(streamID: Int32, into buffer: UnsafeMutableRawBufferPointer) throws -> (count: Int, end: Bool) {
        withStream(streamID) { $0.readBody(into: buffer) } ?? (0, true)
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
