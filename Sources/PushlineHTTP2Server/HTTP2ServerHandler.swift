import CNGHTTP2
import NIOCore
import PushlineHTTP2

/// The server side of one HTTP/2 connection over nghttp2 (h2c prior knowledge, or below TLS):
/// delivers complete requests to its delegate and sends responses whenever the delegate answers.
/// Also the per-connection control surface a mock needs: change SETTINGS_MAX_CONCURRENT_STREAMS,
/// send GOAWAY, refuse or reset streams, close abruptly, and read `stats`.
///
/// Every method must be called on the channel's EventLoop. Responses leave coalesced: one write
/// and one flush per read burst or event-loop tick (`NGHTTP2Output`, shared with the client).
public final class HTTP2ServerHandler: ChannelInboundHandler {
    public typealias InboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    private enum Deferred {
        /// The stream's request, moved out when delivered (a reference: no request copies in the queue).
        case request(ServerStream)
        case streamClosed(Int32, HTTP2ErrorCode)
        case violation
        case pong(EventLoopPromise<TimeAmount>, TimeAmount)
        case goAwayReceived(HTTP2GoAway)
        case goAwaySent(HTTP2GoAway)
        case resetReceived(Int32, HTTP2ErrorCode)
    }

    public let configuration: HTTP2ServerConfiguration
    public var delegate: (any HTTP2ServerDelegate)?

    private let session: NGHTTP2Session
    /// Writes the session's frames; owns whether the connection ended.
    private let output: NGHTTP2Output
    private var responseHeaders = ResponseHeaderBlock()
    // The per-request state below is `@exclusivity(unchecked)`: it is touched only on the
    // EventLoop, by plain reads and mutations that never overlap (nghttp2 callbacks run one at a
    // time and never while one of these is being mutated), and dynamic checks on every header and
    // frame were a measurable share of the server's time.
    @exclusivity(unchecked) private var streams: [Int32: ServerStream] = [:]
    /// The stream whose HEADERS or DATA nghttp2 is reporting: its fields arrive one callback at a
    /// time, and this saves a dictionary lookup for each.
    @exclusivity(unchecked) private var current: ServerStream?
    /// Closed streams kept for reuse (at most `maxSpare`).
    @exclusivity(unchecked) private var spareStreams: [ServerStream] = []
    /// Request buffers of delivered requests, for the next streams (at most `maxSpare`); the most
    /// recently used first, so new requests are written into memory still in cache.
    @exclusivity(unchecked) private var spareStorage: [ServerStream.Storage] = []
    private static let maxSpare = 1024
    private var pings = PingTracker()
    @exclusivity(unchecked) private var deferred: [Deferred] = []
    /// The next event `runDeferred` delivers.
    @exclusivity(unchecked) private var deferredIndex = 0

    /// Open streams, the most open at once, limit violations, requests received.
    @exclusivity(unchecked) public private(set) var stats = ServerStreamStats()
    /// The SETTINGS_MAX_CONCURRENT_STREAMS most recently sent (perhaps not yet acknowledged).
    public private(set) var advertisedMaxConcurrentStreams: UInt32
    /// The GOAWAY this side sent, if any.
    public private(set) var sentGoAway: HTTP2GoAway?
    /// The GOAWAY the client sent, if any.
    public private(set) var receivedGoAway: HTTP2GoAway?

    public init(configuration: HTTP2ServerConfiguration = .init(), delegate: any HTTP2ServerDelegate) {
        self.configuration = configuration
        self.delegate = delegate
        self.advertisedMaxConcurrentStreams = configuration.maxConcurrentStreams
        do {
            // Until the client's SETTINGS arrive nghttp2 assumes it allows 100 streams; a server
            // never opens streams, so the value does not matter here.
            session = try NGHTTP2Session(
                role: .server,
                peerMaxConcurrentStreams: 100,
                resetRateLimit: (configuration.resetRateLimit.burst, configuration.resetRateLimit.perSecond),
                installCallbacks: installNGHTTP2ServerCallbacks
            )
        } catch {
            // nghttp2_session_server_new2 and nghttp2_option_new fail only when out of memory.
            fatalError("cannot create an nghttp2 server session: \(error)")
        }
        output = NGHTTP2Output(session: session)
        session.events = self
        session.owner = Unmanaged.passUnretained(self).toOpaque()
        output.owner = self
    }

    /// The channel's EventLoop, once the handler is in a pipeline.
    public var eventLoop: (any EventLoop)? { output.context?.eventLoop }

    /// Streams opened by the client and not yet closed.
    public var openStreams: Int { stats.openStreams }

    /// The SETTINGS_MAX_CONCURRENT_STREAMS the client has acknowledged (what nghttp2 enforces).
    public var acknowledgedMaxConcurrentStreams: UInt32 { session.localMaxConcurrentStreams }

    // MARK: Responding

    /// Sends a response on `streamID`. Returns false when the stream is gone (reset, refused,
    /// above a GOAWAY we sent, connection closed) or was already answered.
    @discardableResult
    public func respond(to streamID: Int32, status: Int, headers: [HTTP2Header] = [], body: ByteBuffer? = nil) -> Bool {
        respond(to: streamID, status: status, fields: HTTP2HeaderFields(headers), body: body)
    }

    /// `respond(to:status:headers:body:)` with the headers as bytes: no `String` or array per
    /// response, for servers that answer at a high rate (reuse one `HTTP2HeaderFields`).
    @discardableResult
    public func respond(to streamID: Int32, status: Int, fields: HTTP2HeaderFields, body: ByteBuffer? = nil) -> Bool {
        guard let stream = answerable(streamID) else { return false }
        let body = body.flatMap { $0.readableBytes > 0 ? $0 : nil }
        stream.responded = true
        stream.responseBody = body
        do {
            let session = self.session
            try responseHeaders.withNVArray(status: status, fields: fields) { nv, count in
                try session.submitResponse(streamID: streamID, nv: nv, count: count, hasBody: body != nil)
            }
        } catch {
            return false
        }
        output.needsDrain()
        return true
    }

    private func answerable(_ streamID: Int32) -> ServerStream? {
        guard !output.ended, let stream = streams[streamID], !stream.responded else { return nil }
        return stream
    }

    // MARK: Connection control

    /// Advertises a new SETTINGS_MAX_CONCURRENT_STREAMS. nghttp2 refuses (REFUSED_STREAM) new
    /// streams above a lowered value at once, and enforces a raised one once the client acknowledges.
    public func setMaxConcurrentStreams(_ value: UInt32) {
        guard !output.ended else { return }
        do {
            try session.submitSettings([(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, value)])
            advertisedMaxConcurrentStreams = value
            output.needsDrain()
        } catch {
            output.context?.fireErrorCaught(error)
        }
    }

    /// Sends GOAWAY. Streams above `lastStreamID` (default: the last stream nghttp2 processed)
    /// are dropped unanswered; the client reports them as unprocessed. The connection closes by
    /// itself once the streams at or below it are answered.
    public func sendGoAway(lastStreamID: Int32? = nil, errorCode: HTTP2ErrorCode = .noError, debugData: ByteBuffer = ByteBuffer()) {
        guard !output.ended else { return }
        do {
            try session.submitGoAway(
                lastStreamID: lastStreamID ?? session.lastProcessedStreamID,
                errorCode: errorCode,
                debugData: debugData
            )
            output.needsDrain()
        } catch {
            output.context?.fireErrorCaught(error)
        }
    }

    /// Resets `streamID` with REFUSED_STREAM: the client may resend it.
    public func refuseStream(_ streamID: Int32) {
        resetStream(streamID, errorCode: .refusedStream)
    }

    /// Resets `streamID` with `errorCode`.
    public func resetStream(_ streamID: Int32, errorCode: HTTP2ErrorCode) {
        guard !output.ended, streams.index(forKey: streamID) != nil else { return }
        do {
            try session.submitReset(streamID: streamID, errorCode: errorCode)
            output.needsDrain()
        } catch {
            output.context?.fireErrorCaught(error)
        }
    }

    /// Closes the TCP connection at once, without GOAWAY.
    public func closeAbruptly() {
        output.context?.close(promise: nil)
    }

    /// Sends a PING; the future yields the round-trip time (it fails if the connection ended).
    public func ping() -> EventLoopFuture<TimeAmount> {
        guard let context = output.context else {
            preconditionFailure("HTTP2ServerHandler.ping() before the handler was added to a pipeline")
        }
        if output.ended { return context.eventLoop.makeFailedFuture(HTTP2StreamError(.connectionClosed, streamID: nil)) }
        defer { output.needsDrain() }
        return pings.send(on: session, eventLoop: context.eventLoop)
    }

    // MARK: ChannelHandler

    public func handlerAdded(context: ChannelHandlerContext) {
        output.handlerAdded(context: context)
        if context.channel.isActive { start() }
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        connectionEnded()
        output.handlerRemoved()
        delegate = nil
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
        var bytes = unwrapInboundIn(data)
        output.readStarted()
        // Fed in slices, with the requests of each slice delivered before the next: a read can
        // carry hundreds of requests, and answering each while its headers are still in the CPU
        // cache costs less than decoding them all first.
        while bytes.readableBytes > 0, !output.ended {
            let slice = bytes.readSlice(length: min(bytes.readableBytes, Self.receiveSlice))!
            do {
                try session.receive(slice)
            } catch {
                // nghttp2 has queued a GOAWAY for protocol errors: try to send it, then close.
                output.drain()
                output.fail(error)
                return
            }
            runDeferred()
        }
    }

    private static let receiveSlice = 4096

    public func channelReadComplete(context: ChannelHandlerContext) {
        output.readCompleted()
        context.fireChannelReadComplete()
    }

    private func start() {
        var settings: [(id: nghttp2_settings_id, value: UInt32)] = [
            (NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, configuration.maxConcurrentStreams),
            (NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, configuration.initialWindowSize),
            (NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1),
        ]
        if let size = configuration.headerTableSize { settings.append((NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, size)) }
        output.start(settings: settings, connectionWindow: configuration.connectionWindowSize)
    }

    /// Delivers the queued events in order, each once. Re-entrant: a delegate that closes the
    /// connection runs this again from `connectionEnded`, which continues from the next event
    /// (`deferredIndex` is shared) so everything queued still arrives before `http2ServerClosed`.
    private func runDeferred() {
        while deferredIndex < deferred.count {
            let item = deferred[deferredIndex]
            deferredIndex += 1
            switch item {
            case .request(let stream):
                delegate?.http2Server(self, didReceive: stream.takeRequest())
                if spareStorage.count < Self.maxSpare { spareStorage.append(stream.releaseStorage()) }
            case .streamClosed(let streamID, let code): delegate?.http2Server(self, streamClosed: streamID, errorCode: code)
            case .violation: delegate?.http2ServerLimitViolated(self)
            case .pong(let promise, let rtt): promise.succeed(rtt)
            case .goAwayReceived(let goAway): delegate?.http2Server(self, goAwayReceived: goAway)
            case .goAwaySent(let goAway): delegate?.http2Server(self, goAwaySent: goAway)
            case .resetReceived(let streamID, let code): delegate?.http2Server(self, resetReceived: streamID, errorCode: code)
            }
        }
        deferred.removeAll(keepingCapacity: true)
        deferredIndex = 0
    }

    private func connectionEnded() {
        guard output.connectionEnded() else { return }
        streams.removeAll()
        current = nil
        stats.connectionClosed()
        for promise in pings.drainAll() {
            promise.fail(HTTP2StreamError(.connectionClosed, streamID: nil))
        }
        runDeferred()
        delegate?.http2ServerClosed(self)
    }
}

@available(*, unavailable)
extension HTTP2ServerHandler: Sendable {}

extension HTTP2ServerHandler: NGHTTP2OutputOwner {
    package func outputFlushed() {
        runDeferred()
    }
}

extension HTTP2ServerHandler: NGHTTP2SessionEvents {
    package func sessionBeginHeaders(streamID: Int32, isRequest: Bool) throws {
        guard isRequest else { return }
        let stream: ServerStream
        if let spare = spareStreams.popLast() {
            spare.reuse(streamID: streamID, storage: spareStorage.popLast())
            stream = spare
        } else {
            stream = ServerStream(streamID: streamID, storage: spareStorage.popLast())
        }
        streams[streamID] = stream
        current = stream
        stats.streamOpened()
    }

    /// The open stream `streamID`, from `current` when nghttp2 is still on it.
    private func stream(_ streamID: Int32) -> ServerStream? {
        if let current, current.streamID == streamID { return current }
        current = streams[streamID]
        return current
    }

    package func sessionHeader(
        streamID: Int32,
        name: UnsafeBufferPointer<UInt8>,
        value: UnsafeBufferPointer<UInt8>,
        neverIndex: Bool
    ) throws {
        // Trailers land here too and join the headers, as before.
        stream(streamID)?.received(name: UnsafeRawBufferPointer(name), value: UnsafeRawBufferPointer(value), neverIndex: neverIndex)
    }

    package func sessionData(streamID: Int32, bytes: UnsafeRawBufferPointer) throws {
        guard let stream = stream(streamID), let context = output.context else { return }
        stream.receivedBody(bytes, allocator: context.channel.allocator)
    }

    package func sessionFrameReceived(_ frame: NGHTTP2Frame) throws {
        switch frame {
        case .headers(let streamID, true, _), .data(let streamID, true):
            guard let stream = stream(streamID), !stream.delivered else { return }
            stream.delivered = true
            stats.requestCompleted()
            deferred.append(.request(stream))
        case .ping(ack: true, let opaque):
            if let (promise, rtt) = pings.acked(opaque, at: .now()) { deferred.append(.pong(promise, rtt)) }
        case .goAway(let goAway):
            receivedGoAway = goAway
            deferred.append(.goAwayReceived(goAway))
        case .rstStream(let streamID, let errorCode):
            // Counted before nghttp2's rate limit looks at it (it may answer this one with GOAWAY).
            stats.resetReceived()
            deferred.append(.resetReceived(streamID, errorCode))
        default:
            break
        }
    }

    package func sessionFrameSent(_ frame: NGHTTP2Frame) throws {
        if case .goAway(let goAway) = frame {
            sentGoAway = goAway
            deferred.append(.goAwaySent(goAway))
        }
    }

    package func sessionFrameNotSent(_ frame: NGHTTP2Frame, libraryError: Int32) throws {}

    package func sessionInvalidFrame(_ frame: NGHTTP2Frame, libraryError: Int32) throws {
        guard case .headers(_, _, true) = frame, libraryError == Int32(NGHTTP2_ERR_PROTO.rawValue) else { return }
        let before = stats.limitViolations
        stats.streamRejected(acknowledgedLimit: Int(session.localMaxConcurrentStreams))
        if stats.limitViolations > before { deferred.append(.violation) }
    }

    package func sessionStreamClosed(streamID: Int32, errorCode: HTTP2ErrorCode) throws {
        guard let stream = streams.removeValue(forKey: streamID) else { return }
        if current === stream { current = nil }
        // A request still waiting in `deferred` keeps its stream until it is delivered.
        if !stream.delivered || stream.taken, spareStreams.count < Self.maxSpare {
            spareStreams.append(stream)
        }
        stats.streamClosed()
        deferred.append(.streamClosed(streamID, errorCode))
    }

    package func sessionReadBody(streamID: Int32, into buffer: UnsafeMutableRawBufferPointer) throws -> (count: Int, end: Bool) {
        streams[streamID]?.readBody(into: buffer) ?? (0, true)
    }
}
