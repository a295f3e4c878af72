import Logging
import NIOCore
import PushlineAPNSCore
import PushlineHTTP2
import Synchronization

/// One slot of the pool: an HTTP/2 connection that reconnects in place. It carries out what the
/// pool's state machine decides and reports what happened as values (`ConnectionEvent`); it holds
/// no reference to the pool, no request state (it reads the immutable requests it is given and
/// reports their ends as `StreamEnded`), and no lifecycle state: the pool's `ConnectionLifecycle`
/// for this slot is the one record of whether the connection connects, carries requests, drains,
/// waits to reconnect or is shut down.
///
/// No call cycles: a report returns what the pool decided for this connection
/// (`ConnectionActions`), which the connection then carries out itself; the pool never calls into
/// a connection from inside that connection's report, and hands what it decides for the others to
/// their event loops (`perform(_:)` and `deliver(_:)` arrive in a later event-loop turn).
///
/// Its parts, one role each: `ConnectionChannelSetup` opens the channel (TCP, proxy, TLS; a plain
/// channel in tests), `RequestWriter` writes requests, `EndedStreams` turns the HTTP/2 handler's
/// completions into values and metrics, `ConnectionTimers` holds the timers, `SendOrder` the
/// deadlines of the streams in flight.
///
/// `@unchecked Sendable`: every mutable property is touched only on `eventLoop` (the pool hops
/// there with `execute` before calling in), and the HTTP/2 handler calls its delegate there too.
final class PooledConnection: HTTP2ClientDelegate, @unchecked Sendable {
    /// What a connection needs to know, fixed for the pool's life.
    struct Settings: Sendable {
        /// Opens the channel (`APNSChannelSetup` for APNs).
        var channelSetup: any ConnectionChannelSetup
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

    /// Tells the pool an event of connection `slot`; returns what the pool decided for it.
    typealias Report = @Sendable (_ slot: Int, _ event: ConnectionEvent) -> ConnectionActions

    let slot: Int
    let eventLoop: any EventLoop
    private let settings: Settings
    private let reportToPool: Report

    // `@exclusivity(unchecked)`: confined to one event loop and never accessed re-entrantly (the
    // nghttp2 callbacks run inside our calls into the session, but touch no property those calls
    // hold open); without the pooled connection's and the result batch's, the worker's CPU per
    // notification was ×1.050 at 100 tokens per job, and ×1.100 without them all (docs/architecture.md,
    // "Unsafe constructs on the hot path").
    @exclusivity(unchecked) private var channel: (any Channel)?
    @exclusivity(unchecked) private var handler: HTTP2ClientHandler?
    /// Streams sent on this connection in send order, for the deadline sweep.
    @exclusivity(unchecked) private var sent = SendOrder()
    /// Streams that ended since the last report: reported in one event per event-loop batch
    /// instead of one pool lock per response.
    @exclusivity(unchecked) private var ended: EndedStreams
    @exclusivity(unchecked) private var writer: RequestWriter
    private let timers: ConnectionTimers
    /// Requests handed over from other threads, waiting for one `start` on the event loop: many
    /// small hand-overs (jobs of one token) share one hop instead of waking the loop for each.
    private let inbox = Mutex<(requests: [OutgoingRequest], scheduled: Bool)>(([], false))

    init(slot: Int, eventLoop: any EventLoop, settings: Settings, report: @escaping Report) {
        self.slot = slot
        self.eventLoop = eventLoop
        self.settings = settings
        self.reportToPool = report
        ended = EndedStreams(metrics: settings.metrics)
        writer = RequestWriter(authority: settings.authority)
        timers = ConnectionTimers(
            eventLoop: eventLoop,
            pingInterval: settings.pingInterval,
            pingTimeout: settings.pingTimeout,
            closeTimeout: settings.closeTimeout
        )
    }

    // MARK: Reports

    /// Tells the pool, and carries out what it decided for this connection.
    private func report(_ event: ConnectionEvent) {
        carryOut(reportToPool(slot, event))
    }

    /// Reports the streams that ended since the last report (and their answers' metrics), and
    /// carries out what the pool decided.
    private func reportEnded() {
        if let actions = tellEnded() { carryOut(actions) }
    }

    /// Tells the pool the streams that ended, if any. The batch is taken out before the pool hears
    /// of it and put back empty afterwards (the pool keeps nothing of it, so its storage is
    /// reused).
    private func tellEnded() -> ConnectionActions? {
        guard var batch = ended.take() else { return nil }
        let actions = reportToPool(slot, .streamsEnded(batch))
        ended.recycle(&batch)
        return actions
    }

    /// Carries out what the pool decided for this connection: lifecycle steps, then requests to
    /// start. Requests that do not go out are told to the pool in turn, and what it decides then
    /// is carried out in the same loop (the stack does not grow with the number of rounds).
    private func carryOut(_ decided: ConnectionActions) {
        var actions = decided
        while true {
            for action in actions.lifecycle { perform(action) }
            guard !actions.sends.isEmpty else { return }
            if let notStarted = start(actions.sends) {
                actions = reportToPool(slot, notStarted)
            } else if let next = tellEnded() {
                actions = next
            } else {
                return
            }
        }
    }

    // MARK: Lifecycle actions (decided by the pool)

    /// Carries out a lifecycle step the pool decided. On the event loop.
    func perform(_ action: ConnectionLifecycle.Action) {
        eventLoop.preconditionInEventLoop()
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
            timers.scheduleReconnect(after: delay) { [self] in report(.backoffElapsed) }
        }
    }

    private func connect() {
        settings.channelSetup.connect(self).whenComplete { [self] result in
            switch result {
            case .success(let channel):
                self.channel = channel
                // Through a proxy the HTTP/2 handler comes later, with the tunnel (`installed`).
                self.handler = try? channel.pipeline.syncOperations.handler(type: HTTP2ClientHandler.self)
            case .failure(let error):
                settings.logger.warning(
                    "APNs connection failed",
                    metadata: ["slot": "\(slot)", "endpoint": "\(settings.channelSetup.target)", "error": "\(error)"]
                )
                report(.connectFailed)
            }
        }
    }

    // MARK: Channel setup (called by `ConnectionChannelSetup`)

    /// The HTTP/2 handler for a new channel, reporting to this connection.
    func makeHTTP2Handler() -> HTTP2ClientHandler {
        HTTP2ClientHandler(delegate: self)
    }

    /// The HTTP/2 handler went into the channel after it connected (a proxy's tunnel opened).
    func installed(_ handler: HTTP2ClientHandler) {
        self.handler = handler
    }

    /// The channel connected, but could not be set up (a proxy refused the tunnel).
    func setupFailed() {
        report(.connectFailed)
    }

    /// TLS (with ALPN h2) is up: the connection may carry requests once the server's SETTINGS say how many.
    func handshakeCompleted() {
        settings.logger.debug("APNs connection up", metadata: ["slot": "\(slot)"])
        let peerLimit = handler.flatMap { $0.peerSettingsReceived ? $0.peerMaxConcurrentStreams : nil }
        report(.connected(peerLimit: peerLimit))
        timers.startPinging(
            ping: { [weak self] in self?.handler?.ping() },
            lost: { [weak self] in
                guard let self else { return }
                self.settings.logger.warning("APNs PING unanswered: replacing the connection", metadata: ["slot": "\(self.slot)"])
                self.report(.pingLost)
            }
        )
        timers.startSweeping { [weak self] in self?.sweep() }
    }

    func connectionError(_ error: any Error) {
        settings.logger.warning("APNs connection error", metadata: ["slot": "\(slot)", "error": "\(error)"])
        channel?.close(promise: nil)
    }

    /// Closes the slot's connection politely, for the pool's shutdown (whose lifecycle decides
    /// that nothing reconnects). The future completes once the channel is closed (its streams
    /// ended, or `closeTimeout` passed).
    func close() -> EventLoopFuture<Void> {
        timers.cancelReconnect()
        // The deadline sweep keeps running: a stream past its deadline is reset, not waited for.
        timers.stopPinging()
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
        timers.boundClose { channel.close(promise: nil) }
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

    /// Hands requests the pool assigned here to the event loop, for one `start` in a later turn:
    /// never inside a call this connection is making.
    func deliver(_ requests: [OutgoingRequest]) {
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
        guard !requests.isEmpty else { return }
        carryOut(ConnectionActions(sends: requests))
    }

    /// Sends requests the pool assigned here. The pool reserved a stream for each within this
    /// connection's limit (its `StreamCapacity` is the one count of free streams); a connection
    /// that stopped taking streams since gives them back: the returned event. Requests that
    /// could not be written go to `ended`.
    private func start(_ requests: [OutgoingRequest]) -> ConnectionEvent? {
        eventLoop.preconditionInEventLoop()
        guard let handler, handler.isAcceptingStreams else {
            return .notStarted(requests.map(\.id), connectionUnusable: true)
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
                return nil
            }
        }
        let generation = bearer?.generation ?? 0
        let sentValue = StreamTagging.value(sentAt: now, tokenGeneration: generation)
        let authorization = bearer.map { writer.authorization($0) }
        var firstOnConnection = writer.isFirstRequest(on: handler)
        for request in requests {
            do {
                let streamID = try writer.submit(
                    request,
                    sent: sentValue,
                    authorization: authorization,
                    firstOnConnection: firstOnConnection,
                    to: handler
                )
                sent.append(streamID: streamID, deadline: deadline)
            } catch {
                // Not sent (the connection is going away): it goes again elsewhere.
                ended.append(
                    StreamEnded(id: request.id, sentAt: now, tokenGeneration: generation, end: error.isUnprocessed ? .unprocessed : .lost)
                )
            }
            firstOnConnection = false
        }
        return nil
    }

    /// Resets the streams whose request deadline passed (RST_STREAM CANCEL frees the slot at
    /// once; the outcome is `timeout`). One timer per connection instead of one per request keeps
    /// the event loop's timer heap small at thousands of requests per second.
    private func sweep() {
        guard let handler else { return }
        for streamID in sent.expired(now: .now, isOpen: handler.isOpen(streamID:)) {
            handler.cancel(streamID: streamID)
        }
    }

    // MARK: HTTP2ClientDelegate

    func http2Client(_ client: HTTP2ClientHandler, completed tag: HTTP2StreamTag, result: Result<HTTP2Response, HTTP2StreamError>) {
        ended.completed(tag, result: result)
    }

    func http2ClientStreamsFinished(_ client: HTTP2ClientHandler) {
        reportEnded()
    }

    func http2Client(_ client: HTTP2ClientHandler, peerMaxConcurrentStreamsChanged value: Int) {
        report(.peerLimitChanged(value))
    }

    func http2Client(_ client: HTTP2ClientHandler, goAwayReceived goAway: HTTP2GoAway) {
        settings.logger.info(
            "APNs sent GOAWAY",
            metadata: ["slot": "\(slot)", "last_stream_id": "\(goAway.lastStreamID)", "debug": "\(goAway.debugText)"]
        )
        reportEnded()
        report(.goAway)
    }

    func http2ClientClosed(_ client: HTTP2ClientHandler) {
        reportEnded()
        sent.removeAll()
        channel = nil
        handler = nil
        timers.connectionClosed()
        report(.closed)
    }
}
