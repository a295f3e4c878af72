import Logging
import NIOCore
import NIOPosix
import PushlineAPNSCore
import PushlineHTTP2
import PushlineTLS
import Synchronization

/// One slot of the pool: a TLS + HTTP/2 connection that reconnects in place. A thin I/O adapter:
/// it connects, pings, resets streams past their deadline, builds and submits requests, and
/// reports what happened (`ConnectionEvent`) to the pool's state machine, which decides
/// everything else. It holds no reference to the pool, and no request state: it reads the
/// immutable requests it is given and reports their ends as values (`StreamEnded`).
///
/// No re-entrant calls: while a report is with the pool, whatever the pool asks of this
/// connection (requests to start, lifecycle steps) is queued and run after the report returns,
/// so the pool never calls into a connection in the middle of that connection's own call.
///
/// `@unchecked Sendable`: every mutable property is touched only on `eventLoop` (the pool hops
/// there with `execute` before calling in), and the HTTP/2 handler calls its delegate there too.
final class PooledConnection: HTTP2ClientDelegate, @unchecked Sendable {
    /// What a connection needs to know, fixed for the pool's life.
    struct Settings: Sendable {
        var endpoint: APNSEndpoint
        var proxy: APNSProxy?
        var tlsContext: TLSContext
        var connectTimeout: Duration
        var requestTimeout: Duration
        var pingInterval: Duration
        var pingTimeout: Duration
        /// How long a polite close waits for open streams before it closes TCP anyway.
        var closeTimeout: Duration
        /// The `:authority` of every request (formatted once, not per request).
        var authority: String
        var tokens: ProviderTokenSource?
        var metrics: APNSMetrics
        var logger: Logger
    }

    let slot: Int
    let eventLoop: any EventLoop
    private let settings: Settings
    private let reportToPool: @Sendable (_ slot: Int, _ event: ConnectionEvent) -> Void

    // `@exclusivity(unchecked)`: confined to one event loop and never accessed re-entrantly (the
    // nghttp2 callbacks run inside our calls into the session, but touch no property those calls
    // hold open); their run-time checks were ~1.8% of the worker's CPU (docs/architecture.md).
    @exclusivity(unchecked) private var channel: (any Channel)?
    @exclusivity(unchecked) private var handler: HTTP2ClientHandler?
    private var sentOnThisConnection = false
    private var pingTask: RepeatedTask?
    private var pingDeadline: Scheduled<Void>?
    private var reconnectTask: Scheduled<Void>?
    /// The bound of a polite close in progress: closes the channel if its streams outlast it.
    private var closeDeadline: Scheduled<Void>?
    /// Streams sent on this connection in send order, for the deadline sweep.
    @exclusivity(unchecked) private var sent = SendOrder()
    private var sweepTask: RepeatedTask?
    /// Streams that ended since the last report: reported in one event per event-loop batch
    /// instead of one pool lock per response.
    @exclusivity(unchecked) private var ended: [StreamEnded] = []
    /// When the answers of the batch in `ended` arrived: read once, at the batch's first answer
    /// (its answers are handled one after another within microseconds), and let go when the
    /// batch is reported.
    @exclusivity(unchecked) private var batchAnsweredAt: MonotonicInstant?
    /// The batch's answers for the metrics, counted in place and recorded when it is reported:
    /// plain 200s, and every answer's latency.
    @exclusivity(unchecked) private var answeredOK = 0
    private let latencies = TimerTally()
    /// A report is with the pool: what the pool asks of this connection meanwhile waits in
    /// `afterReport`, and runs once the report returned.
    @exclusivity(unchecked) private var reporting = false
    @exclusivity(unchecked) private var afterReport: [PoolRequest] = []
    @exclusivity(unchecked) private var runningAfterReport = false
    private var shutDown = false
    /// `:method`, `:scheme` and `:authority`, the same on every request: laid out once, and
    /// referenced by each request's header block rather than copied into it.
    private let pseudoHeaders: HTTP2ConstantFields
    /// The current provider token's `authorization` field and its generation: remade once per
    /// token rotation.
    @exclusivity(unchecked) private var authorizationField: (generation: UInt16, authorization: String, fields: HTTP2ConstantFields)?
    /// The regular fields shared batches' requests share (push type, topic, priority, expiration,
    /// collapse id): remade only when a batch asks for other values.
    @exclusivity(unchecked) private var sharedFields = SharedHeaderFields()
    /// Requests handed over from other threads, waiting for one `start` on the event loop: many
    /// small hand-overs (jobs of one token) share one hop instead of waking the loop for each.
    private let inbox = Mutex<(requests: [OutgoingRequest], scheduled: Bool)>(([], false))

    /// What the pool asked of this connection while one of its reports was with the pool.
    private enum PoolRequest {
        case start([OutgoingRequest])
        case perform(ConnectionLifecycle.Action)
    }

    init(
        slot: Int,
        eventLoop: any EventLoop,
        settings: Settings,
        report: @escaping @Sendable (_ slot: Int, _ event: ConnectionEvent) -> Void
    ) {
        self.slot = slot
        self.eventLoop = eventLoop
        self.settings = settings
        self.reportToPool = report
        // Apple's rule: `:authority` never indexed (APNSRequestHeaders).
        pseudoHeaders = HTTP2ConstantFields([
            (":method", "POST", false), (":scheme", "https", false), (":authority", settings.authority, true),
        ])
    }

    /// Tells the pool; whatever it asks of this connection meanwhile runs after this returns.
    private func report(_ slot: Int, _ event: ConnectionEvent) {
        tell(event)
        runAfterReport()
    }

    /// Tells the pool, queueing what it asks of this connection meanwhile.
    private func tell(_ event: ConnectionEvent) {
        precondition(!reporting, "a connection reported to its pool from inside one of its reports")
        reporting = true
        reportToPool(slot, event)
        reporting = false
    }

    /// Runs what the pool asked during reports, in order, including what it asks while these run
    /// (one loop: the stack does not grow with the number of rounds).
    private func runAfterReport() {
        guard !runningAfterReport, !afterReport.isEmpty else { return }
        runningAfterReport = true
        defer { runningAfterReport = false }
        var pending: [PoolRequest] = []
        while !afterReport.isEmpty {
            swap(&pending, &afterReport)
            for request in pending {
                switch request {
                case .start(let requests): start(requests)
                case .perform(let action): performNow(action)
                }
            }
            pending.removeAll(keepingCapacity: true)
        }
    }

    // MARK: Lifecycle actions (decided by the pool)

    func perform(_ action: ConnectionLifecycle.Action) {
        eventLoop.preconditionInEventLoop()
        if reporting {
            afterReport.append(.perform(action))
        } else {
            performNow(action)
        }
    }

    private func performNow(_ action: ConnectionLifecycle.Action) {
        switch action {
        case .none:
            break
        case .connect:
            connect()
        case .close:
            closePolitely()
        case .abandon:
            abandon()
        case .scheduleReconnect(let delay):
            reconnectTask?.cancel()
            reconnectTask = eventLoop.scheduleTask(in: TimeAmount(delay)) { [self] in
                guard !shutDown else { return }
                report(slot, .backoffElapsed)
            }
        }
    }

    private func connect() {
        guard !shutDown else { return }
        let endpoint = settings.endpoint
        let proxy = settings.proxy
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(TimeAmount(settings.connectTimeout))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let proxy else {
                        try channel.pipeline.syncOperations.addHandlers(try makeProtocolHandlers() + [ConnectionEvents(connection: self)])
                        return
                    }
                    // Through a proxy: CONNECT first; TLS and HTTP/2 go in once the tunnel is open.
                    let tunnel = HTTPConnectHandler(
                        target: HostPort(host: endpoint.host, port: endpoint.port).description,
                        authorization: proxy.authorization,
                        established: { [self] context in
                            // One at a time, each after the previous: TLS right after the tunnel.
                            var previous = context.handler
                            for next in try makeProtocolHandlers() {
                                try context.pipeline.syncOperations.addHandler(next, position: .after(previous))
                                previous = next
                            }
                            handler = try context.pipeline.syncOperations.handler(type: HTTP2ClientHandler.self)
                        },
                        failed: { [self] error in
                            settings.logger.warning(
                                "APNs connection through the proxy failed",
                                metadata: ["slot": "\(slot)", "proxy": "\(proxy)", "endpoint": "\(endpoint)", "error": "\(error)"]
                            )
                            report(slot, .connectFailed)
                        }
                    )
                    try channel.pipeline.syncOperations.addHandlers([tunnel, ConnectionEvents(connection: self)])
                }
            }
        // ClientBootstrap resolves the host on every connect: DNS is re-resolved for each new
        // connection, as APNs asks (its addresses change). Through a proxy, the proxy resolves it.
        let (host, port) = proxy.map { ($0.host, $0.port) } ?? (endpoint.host, endpoint.port)
        bootstrap.connect(host: host, port: port).whenComplete { [self] result in
            switch result {
            case .success(let channel):
                self.channel = channel
                // Through a proxy the HTTP/2 handler comes later, with the tunnel.
                if proxy == nil {
                    self.handler = try? channel.pipeline.syncOperations.handler(type: HTTP2ClientHandler.self)
                }
                self.sentOnThisConnection = false
            case .failure(let error):
                settings.logger.warning(
                    "APNs connection failed",
                    metadata: ["slot": "\(slot)", "endpoint": "\(proxy.map { "\($0) (proxy)" } ?? "\(endpoint)")", "error": "\(error)"]
                )
                report(slot, .connectFailed)
            }
        }
    }

    /// TLS (ALPN h2, SNI and verification for the endpoint) and HTTP/2, in pipeline order.
    private func makeProtocolHandlers() throws -> [any ChannelHandler] {
        let tls = try TLSHandler(context: settings.tlsContext, serverHostname: settings.endpoint.host)
        return [tls, HTTP2ClientHandler(delegate: self)]
    }

    /// TLS (with ALPN h2) is up: the connection may carry requests once the server's SETTINGS say how many.
    func handshakeCompleted() {
        settings.logger.debug("APNs connection up", metadata: ["slot": "\(slot)"])
        let peerLimit = handler.flatMap { $0.peerSettingsReceived ? $0.peerMaxConcurrentStreams : nil }
        report(slot, .connected(peerLimit: peerLimit))
        startPinging()
        startSweeping()
    }

    func connectionError(_ error: any Error) {
        settings.logger.warning("APNs connection error", metadata: ["slot": "\(slot)", "error": "\(error)"])
        channel?.close(promise: nil)
    }

    /// Shuts the slot down for good: no reconnect, and a polite close of the connection. The
    /// future completes once the channel is closed (its streams ended, or `closeTimeout` passed).
    func close() -> EventLoopFuture<Void> {
        shutDown = true
        reconnectTask?.cancel()
        // The deadline sweep keeps running: a stream past its deadline is reset, not waited for.
        stopPinging(sweeping: false)
        guard let channel else { return eventLoop.makeSucceededVoidFuture() }
        closePolitely()
        return channel.closeFuture
    }

    /// The polite close (RFC 9113 §6.8): GOAWAY(NO_ERROR, last-stream-id 0: APNs opens no streams
    /// to us), no new streams, and TCP closes when the open streams have ended (the HTTP/2
    /// handler does that itself) or `closeTimeout` after the GOAWAY, whichever comes first.
    /// Repeating it changes nothing. A connection whose HTTP/2 handler is not up yet (TCP or the
    /// proxy's tunnel still opening) has nothing to say goodbye to and closes at once.
    private func closePolitely() {
        guard let channel else { return }
        guard let handler, channel.isActive else {
            channel.close(promise: nil)
            return
        }
        // Only queues the frame; it is written in a later tick, so this is safe from inside one
        // of the handler's delegate calls.
        handler.goAway()
        guard closeDeadline == nil else { return }
        closeDeadline = eventLoop.scheduleTask(in: TimeAmount(settings.closeTimeout)) { [weak self] in
            self?.closeDeadline = nil
            channel.close(promise: nil)
        }
    }

    /// GOAWAY, then TCP closed without waiting for streams (the connection is presumed dead). The
    /// close is scheduled after the write the GOAWAY asked for, so the frame goes first when the
    /// socket still takes bytes.
    private func abandon() {
        guard let channel else { return }
        handler?.goAway()
        eventLoop.execute { channel.close(promise: nil) }
    }

    // MARK: Requests

    /// Hands requests the pool assigned here to the event loop (at once when already on it, after
    /// the current report when one is with the pool).
    func deliver(_ requests: [OutgoingRequest]) {
        if eventLoop.inEventLoop {
            if reporting {
                afterReport.append(.start(requests))
            } else {
                start(requests)
            }
            return
        }
        let schedule = inbox.withLock { inbox -> Bool in
            inbox.requests.append(contentsOf: requests)
            guard !inbox.scheduled else { return false }
            inbox.scheduled = true
            return true
        }
        if schedule {
            eventLoop.execute { self.startDelivered() }
        }
    }

    private func startDelivered() {
        let requests = inbox.withLock { inbox -> [OutgoingRequest] in
            inbox.scheduled = false
            defer { inbox.requests = [] }
            return inbox.requests
        }
        if !requests.isEmpty { start(requests) }
    }

    /// Sends requests the pool assigned here. The pool reserved a stream for each within this
    /// connection's limit (its `StreamCapacity` is the one count of free streams); a connection
    /// that stopped taking streams since gives them back (`notStarted`).
    private func start(_ requests: [OutgoingRequest]) {
        eventLoop.preconditionInEventLoop()
        guard let handler, handler.isAcceptingStreams else {
            report(slot, .notStarted(requests.map(\.id), connectionUnusable: true))
            return
        }
        // One clock read and one look at the token source per batch: its requests leave in the
        // same write.
        let now = MonotonicInstant.now
        let deadline = now + settings.requestTimeout
        var bearer: ProviderTokenSource.Bearer?
        if let tokens = settings.tokens {
            do {
                bearer = try tokens.token()
            } catch {
                settings.logger.error("cannot sign a provider token", metadata: ["error": "\(error)"])
                for request in requests { ended.append(StreamEnded(id: request.id, sentAt: now, tokenGeneration: 0, end: .lost)) }
                reportEnded()
                return
            }
        }
        let generation = bearer?.generation ?? 0
        let sent = StreamTagging.value(sentAt: now, tokenGeneration: generation)
        let pseudoHeaders = pseudoHeaders
        let authorization = bearer.map(authorizationFields)
        for request in requests {
            let firstOnConnection = !sentOnThisConnection
            sentOnThisConnection = true
            do {
                let batch = request.batch
                let tag = HTTP2StreamTag(object: batch, id: StreamTagging.id(request.id, index: request.index), value: sent)
                // The fields go straight from the immutable notification into the session's header
                // block: no header array, no request value, no copy of the notification.
                let streamID: Int32
                if batch.isShared {
                    let regular = sharedFields.fields(of: batch, firstOnConnection: firstOnConnection)
                    streamID = try handler.submit(tag: tag, body: batch.body(at: request.index)) { block in
                        Self.writeHeaders(
                            of: batch,
                            index: request.index,
                            pseudoHeaders: pseudoHeaders,
                            authorization: authorization,
                            regular: regular,
                            into: &block
                        )
                    }
                } else {
                    streamID = try handler.submit(tag: tag, body: batch.body(at: request.index)) { block in
                        Self.writeHeaders(
                            of: batch.notifications[request.index],
                            pseudoHeaders: pseudoHeaders,
                            authorization: authorization,
                            firstOnConnection: firstOnConnection,
                            into: &block
                        )
                    }
                }
                self.sent.append(streamID: streamID, deadline: deadline)
            } catch {
                // Not sent (the connection is going away): it goes again elsewhere.
                ended.append(
                    StreamEnded(id: request.id, sentAt: now, tokenGeneration: generation, end: error.isUnprocessed ? .unprocessed : .lost)
                )
            }
        }
        reportEnded()
    }

    /// The `authorization` field of `bearer`, made once per token.
    private func authorizationFields(_ bearer: ProviderTokenSource.Bearer) -> HTTP2ConstantFields {
        // The generation decides; the token's text (usually the same storage: a pointer compare)
        // makes sure a wrapped generation can never bring back another token's field.
        if let current = authorizationField, current.generation == bearer.generation, current.authorization == bearer.authorization {
            return current.fields
        }
        // Never indexed (Apple's rule for the provider token).
        let fields = HTTP2ConstantFields([("authorization", bearer.authorization, true)])
        authorizationField = (bearer.generation, bearer.authorization, fields)
        return fields
    }

    /// A notification's header block, in Apple's HPACK discipline (`APNSRequestHeaders`): the
    /// pseudo-headers (`:authority` and `:path` never indexed), the `authorization` field, then the
    /// other regular fields. The pseudo-headers and the token are constant fields, referenced
    /// rather than copied.
    private static func writeHeaders(
        of notification: APNSNotification,
        pseudoHeaders: HTTP2ConstantFields,
        authorization: HTTP2ConstantFields?,
        firstOnConnection: Bool,
        into block: inout HTTP2HeaderBlock
    ) {
        block.append(pseudoHeaders)
        let (pathPrefix, pathRest) = notification.destination.pathParts
        block.append(":path", pathPrefix, valueSuffix: pathRest, neverIndex: true)
        if let authorization { block.append(authorization) }
        APNSRequestHeaders.forEachRegularHeader(of: notification, authorization: nil, firstOnConnection: firstOnConnection) {
            name,
            value,
            indexing in
            block.append(name, value, neverIndex: indexing == .never)
        }
    }

    /// Request `index` of a shared batch, in the same order: only `:path` and `apns-id` are its
    /// own (from the batch's bytes: no string for either); every other field is a constant
    /// field (`regular`: those before the id and those after it, `SharedHeaderFields`).
    private static func writeHeaders(
        of batch: RequestBatch,
        index: Int,
        pseudoHeaders: HTTP2ConstantFields,
        authorization: HTTP2ConstantFields?,
        regular: SharedHeaderFields.Fields,
        into block: inout HTTP2HeaderBlock
    ) {
        block.append(pseudoHeaders)
        batch.tokens.withToken(at: index) { token in
            block.append(":path", valuePrefix: APNSDestination.devicePathPrefix, valueBytes: token, neverIndex: true)
        }
        if let authorization { block.append(authorization) }
        block.append(regular.leading)
        batch.ids!.withID(at: index) { id in
            block.append(APNSRequestHeaders.deviceIDHeader, valueBytes: id, neverIndex: regular.idNeverIndexed)
        }
        if let trailing = regular.trailing { block.append(trailing) }
    }

    /// Records the batch's answers in the metrics, then reports the streams that ended since the
    /// last call, in one event. The batch is taken out
    /// before the pool hears of it and put back empty afterwards (the pool keeps nothing of it,
    /// so its storage is reused); only then do the requests the pool handed back start, whose
    /// ends make the next batch.
    private func reportEnded() {
        batchAnsweredAt = nil
        if answeredOK > 0 {
            settings.metrics.okResponses(answeredOK)
            answeredOK = 0
        }
        latencies.flush()
        guard !ended.isEmpty else { return }
        var batch: [StreamEnded] = []
        swap(&batch, &ended)
        tell(.streamsEnded(batch))
        // What the pool asked for waits in `afterReport`, so nothing ended meanwhile.
        batch.removeAll(keepingCapacity: true)
        if ended.isEmpty { swap(&batch, &ended) }
        runAfterReport()
    }

    /// Every 50 ms, resets the streams whose request deadline passed (RST_STREAM CANCEL frees the
    /// slot at once; the outcome is `timeout`). One timer per connection instead of one per
    /// request keeps the event loop's timer heap small at thousands of requests per second.
    private func startSweeping() {
        sweepTask?.cancel()
        sweepTask = eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(50), delay: .milliseconds(50)) { [weak self] _ in
            guard let self, let handler = self.handler else { return }
            for streamID in self.sent.expired(now: .now, isOpen: handler.isOpen(streamID:)) {
                handler.cancel(streamID: streamID)
            }
        }
    }

    // MARK: HTTP2ClientDelegate

    func http2Client(_ client: HTTP2ClientHandler, completed tag: HTTP2StreamTag, result: Result<HTTP2Response, HTTP2StreamError>) {
        let id = StreamTagging.requestID(tag.id)
        let sentAt = StreamTagging.sentAt(tag.value)
        let generation = StreamTagging.tokenGeneration(tag.value)
        switch result {
        case .success(let http2Response):
            var body: [UInt8] = []
            if let buffer = http2Response.body { body = Array(buffer.readableBytesView) }
            let response = APNSResponse(
                status: http2Response.status,
                apnsID: Self.answeredID(http2Response.headers, tag: tag),
                apnsUniqueID: http2Response.headers.first(named: "apns-unique-id"),
                body: body
            )
            let answeredAt = batchAnsweredAt ?? MonotonicInstant.now
            batchAnsweredAt = answeredAt
            let latency = answeredAt.nanoseconds(since: sentAt)
            latencies.record(latency, in: settings.metrics.latency)
            if response.status == 200 && response.reason == nil {
                answeredOK += 1
            } else {
                settings.metrics.otherResponse(status: response.status, reason: response.reason?.rawValue)
            }
            ended.append(StreamEnded(id: id, sentAt: sentAt, tokenGeneration: generation, end: .response(response)))
        case .failure(let error):
            let end: StreamEnd
            switch error.kind {
            case .cancelled:
                // Only the deadline sweep cancels streams.
                end = .timedOut
            case .reset(.protocolError):
                end = .malformed
            case .connectionError:
                end = .connectionError
            default:
                end = error.isUnprocessed ? .unprocessed : .lost
            }
            ended.append(StreamEnded(id: id, sentAt: sentAt, tokenGeneration: generation, end: end))
        }
    }

    /// The id an answer carries, without a new string when it is the request's own: a device
    /// push's `apns-id` (for a notification given alone, the request's own string; for a shared
    /// batch, nil when it echoes the request's id: `APNSClient.send(_:options:completion:)`), or
    /// a broadcast's `apns-request-id`.
    private static func answeredID(_ headers: HTTP2ResponseHeaders, tag: HTTP2StreamTag) -> String? {
        guard let object = tag.object else { return headers.first(named: APNSRequestHeaders.deviceIDHeader) }
        let batch = unsafeDowncast(object, to: RequestBatch.self)
        let index = StreamTagging.index(tag.id)
        guard let ids = batch.ids else {
            return headers.first(named: APNSRequestHeaders.deviceIDHeader, reusing: batch.notifications[index].apnsID)
                ?? headers.first(named: "apns-request-id")
        }
        let comparison = ids.withID(at: index) {
            headers.compare(named: APNSRequestHeaders.deviceIDHeader, with: $0)
        }
        switch comparison {
        case .equal, .absent: return nil
        case .different(let other): return other
        }
    }

    func http2ClientStreamsFinished(_ client: HTTP2ClientHandler) {
        reportEnded()
    }

    func http2Client(_ client: HTTP2ClientHandler, peerMaxConcurrentStreamsChanged value: Int) {
        report(slot, .peerLimitChanged(value))
    }

    func http2Client(_ client: HTTP2ClientHandler, goAwayReceived goAway: HTTP2GoAway) {
        settings.logger.info(
            "APNs sent GOAWAY",
            metadata: ["slot": "\(slot)", "last_stream_id": "\(goAway.lastStreamID)", "debug": "\(goAway.debugText)"]
        )
        reportEnded()
        report(slot, .goAway)
    }

    func http2ClientClosed(_ client: HTTP2ClientHandler) {
        reportEnded()
        sent.removeAll()
        channel = nil
        handler = nil
        closeDeadline?.cancel()
        closeDeadline = nil
        stopPinging()
        report(slot, .closed)
    }

    // MARK: Health

    private func startPinging() {
        stopPinging(sweeping: false)
        let interval = TimeAmount(settings.pingInterval)
        let timeout = TimeAmount(settings.pingTimeout)
        pingTask = eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { [weak self] _ in
            guard let self, let handler = self.handler, self.pingDeadline == nil else { return }
            self.pingDeadline = self.eventLoop.scheduleTask(in: timeout) { [weak self] in
                guard let self else { return }
                self.pingDeadline = nil
                self.settings.logger.warning("APNs PING unanswered: replacing the connection", metadata: ["slot": "\(self.slot)"])
                self.report(self.slot, .pingLost)
            }
            handler.ping().whenComplete { [weak self] _ in
                self?.pingDeadline?.cancel()
                self?.pingDeadline = nil
            }
        }
    }

    private func stopPinging(sweeping: Bool = true) {
        if sweeping {
            sweepTask?.cancel()
            sweepTask = nil
        }
        pingTask?.cancel()
        pingTask = nil
        pingDeadline?.cancel()
        pingDeadline = nil
    }
}

/// What a pooled connection reports to its pool.
enum ConnectionEvent: Sendable {
    case connectFailed
    /// TLS is up; the server's SETTINGS_MAX_CONCURRENT_STREAMS if it came already.
    case connected(peerLimit: Int?)
    case peerLimitChanged(Int)
    case goAway
    case pingLost
    case closed
    case backoffElapsed
    /// The streams that ended in one event-loop batch, in order.
    case streamsEnded([StreamEnded])
    /// Requests the pool assigned here that could not start.
    case notStarted([RequestID], connectionUnusable: Bool)
}

/// The tail of a pooled connection's pipeline: turns TLS and error events into calls on the slot.
final class ConnectionEvents: ChannelInboundHandler {
    typealias InboundIn = Never
    private let connection: PooledConnection

    init(connection: PooledConnection) {
        self.connection = connection
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted? = event as? TLSUserEvent {
            connection.handshakeCompleted()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        connection.connectionError(error)
    }
}

@available(*, unavailable)
extension ConnectionEvents: Sendable {}
