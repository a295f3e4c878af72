import APNSCore
import Logging
import NIOCore
import NIONGHTTP2
import NIOOpenSSL
import NIOPosix
import Synchronization

/// One slot of the pool: a TLS + HTTP/2 connection that reconnects in place.
///
/// `@unchecked Sendable`: every mutable property is touched only on `eventLoop` (the pool hops
/// there with `execute` before calling in), and the HTTP/2 handler calls its delegate there too.
final class PooledConnection: HTTP2ClientDelegate, @unchecked Sendable {
    let slot: Int
    let eventLoop: any EventLoop
    weak var client: APNSClient?

    private var channel: (any Channel)?
    private var handler: HTTP2ClientHandler?
    private var sentOnThisConnection = false
    private var pingTask: RepeatedTask?
    private var pingDeadline: Scheduled<Void>?
    private var reconnectTask: Scheduled<Void>?
    /// Requests with an open stream on this connection in the order they were sent, for the
    /// deadline sweep. Every request gets the same timeout, so the oldest is the first to expire;
    /// entries of requests that already ended are dropped when they reach the front.
    private var sent = SendOrder()
    private var sweepTask: RepeatedTask?
    /// Streams that ended since the pool's counts were last updated: released in one go per
    /// event-loop batch instead of one pool lock per response.
    private var finishedStreams = 0
    private var anyFinishedSucceeded = false
    private var shutDown = false
    private var random = SystemRandomNumberGenerator()
    /// Requests handed over from other threads, waiting for one `start` on the event loop: many
    /// small hand-overs (jobs of one token) share one hop instead of waking the loop for each.
    private let inbox = Mutex<(requests: [PendingRequest], scheduled: Bool)>(([], false))

    init(slot: Int, eventLoop: any EventLoop) {
        self.slot = slot
        self.eventLoop = eventLoop
    }

    // MARK: Connecting

    func connect() {
        eventLoop.preconditionInEventLoop()
        guard let client, !shutDown else { return }
        let endpoint = client.configuration.endpoint
        let context = client.tlsContext
        let timeout = client.configuration.connectTimeout
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(.nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    let tls = try TLSHandler(context: context, serverHostname: endpoint.host)
                    let http2 = HTTP2ClientHandler(delegate: self)
                    try channel.pipeline.syncOperations.addHandlers([
                        tls, http2, ConnectionEvents(connection: self),
                    ])
                }
            }
        // ClientBootstrap resolves the host on every connect: DNS is re-resolved for each new
        // connection, as APNs asks (its addresses change).
        bootstrap.connect(host: endpoint.host, port: endpoint.port).whenComplete { [self] result in
            switch result {
            case .success(let channel):
                self.channel = channel
                self.handler = try? channel.pipeline.syncOperations.handler(type: HTTP2ClientHandler.self)
                self.sentOnThisConnection = false
            case .failure(let error):
                self.connectFailed(error)
            }
        }
    }

    private func connectFailed(_ error: any Error) {
        guard let client else { return }
        client.logger.warning(
            "APNs connection failed", metadata: ["slot": "\(slot)", "endpoint": "\(client.configuration.endpoint)", "error": "\(error)"])
        let action = client.withState { $0.lifecycles[slot].connectFailed(random: Double.random(in: 0..<1, using: &random)) }
        perform(action)
    }

    /// TLS (with ALPN h2) is up: the connection may carry requests once the server's SETTINGS say how many.
    func handshakeCompleted() {
        guard let client else { return }
        client.logger.debug("APNs connection up", metadata: ["slot": "\(slot)"])
        let action = client.withState { state in
            state.capacities[slot].reconnected(tokenAuth: client.credential.isToken)
            if let handler, handler.peerSettingsReceived {
                state.capacities[slot].peerLimitChanged(handler.peerMaxConcurrentStreams)
            }
            return state.lifecycles[slot].connected()
        }
        perform(action)
        startPinging()
        startSweeping()
    }

    /// Every 50 ms, resets the streams whose request deadline passed (RST_STREAM CANCEL frees the
    /// slot at once; the outcome is `timeout`). One timer per connection instead of one per
    /// request keeps the event loop's timer heap small at thousands of requests per second.
    private func startSweeping() {
        sweepTask?.cancel()
        sweepTask = eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(50), delay: .milliseconds(50)) { [weak self] _ in
            guard let self, let handler = self.handler else { return }
            for (streamID, request) in self.sent.expired(now: .now) {
                request.timedOut = true
                handler.cancel(streamID: streamID)
            }
        }
    }

    func connectionError(_ error: any Error) {
        client?.logger.warning("APNs connection error", metadata: ["slot": "\(slot)", "error": "\(error)"])
        channel?.close(promise: nil)
    }

    private func perform(_ action: ConnectionLifecycle.Action) {
        switch action {
        case .none:
            break
        case .connect:
            connect()
        case .close:
            channel?.close(promise: nil)
        case .scheduleReconnect(let delay):
            reconnectTask?.cancel()
            reconnectTask = eventLoop.scheduleTask(in: TimeAmount(delay)) { [self] in
                guard let client else { return }
                perform(client.withState { $0.lifecycles[slot].backoffElapsed() })
            }
        }
    }

    func close() -> EventLoopFuture<Void> {
        shutDown = true
        reconnectTask?.cancel()
        stopPinging()
        guard let channel else { return eventLoop.makeSucceededVoidFuture() }
        return channel.close().recover { _ in }
    }

    // MARK: Requests

    /// Hands requests the pool assigned here to the event loop (at once when already on it).
    func deliver(_ requests: [PendingRequest]) {
        if eventLoop.inEventLoop {
            start(requests)
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
        let requests = inbox.withLock { inbox -> [PendingRequest] in
            inbox.scheduled = false
            defer { inbox.requests = [] }
            return inbox.requests
        }
        if !requests.isEmpty { start(requests) }
    }

    /// Sends requests the pool assigned here (a slot is reserved for each).
    func start(_ requests: [PendingRequest]) {
        eventLoop.preconditionInEventLoop()
        guard let client else { return }
        guard let handler, handler.isAcceptingStreams, handler.availableStreams > 0 else {
            // The connection changed under the pool (closed, GOAWAY, or a lower limit in transit):
            // give the slots back; the pool routes the requests again a moment later.
            if let handler, !handler.isAcceptingStreams {
                perform(client.withState { $0.lifecycles[slot].stopUsing(openStreams: $0.capacities[slot].reserved - requests.count) })
            }
            eventLoop.scheduleTask(in: .milliseconds(1)) { client.unreserve(slot: self.slot, requeue: requests) }
            return
        }
        let authority = client.authority
        var batchBearer: String?
        var headers: [HTTP2Header] = []
        headers.reserveCapacity(7)
        // One clock read per batch: its requests leave in the same write.
        let now = ContinuousClock.now
        for request in requests {
            if let deadline = request.options.deadline, now >= deadline {
                finishedStreams += 1
                request.finish(noResponse: .expired)
                continue
            }
            var bearer: String?
            if let tokens = client.tokens {
                do {
                    // One look at the token source per batch, not per request.
                    if batchBearer == nil { batchBearer = try tokens.token() }
                    bearer = request.bearerToken ?? batchBearer
                } catch {
                    client.logger.error("cannot sign a provider token", metadata: ["error": "\(error)"])
                    finishedStreams += 1
                    request.finish(noResponse: .connection)
                    continue
                }
            }
            request.bearerToken = bearer
            // One header array for the whole batch: the submitted request lets go of it before the
            // next one is built, so emptying it keeps its storage.
            headers.removeAll(keepingCapacity: true)
            APNSRequestHeaders.forEachRegularHeader(
                of: request.notification, authorization: bearer.map { client.tokens!.authorization(for: $0) },
                firstOnConnection: !sentOnThisConnection
            ) { name, value, indexing in
                headers.append(HTTP2Header(name, value, neverIndex: indexing == .never))
            }
            sentOnThisConnection = true
            request.attempts += 1
            request.timedOut = false
            request.sentAt = now
            if request.firstSentAt == nil { request.firstSentAt = now }
            let streamID: Int32
            do {
                let http2Request = HTTP2Request(
                    method: "POST", scheme: "https", authority: authority, path: request.notification.path,
                    indexPath: false, headers: headers, body: request.body)
                streamID = try handler.submit(http2Request, tag: request)
            } catch {
                // Not sent (the connection is going away): it goes again elsewhere.
                completed(request, .failure(error))
                continue
            }
            request.sends += 1
            request.streamID = streamID
            sent.append(request, streamID: streamID, deadline: now + client.configuration.requestTimeout)
        }
        releaseFinishedStreams()
    }

    /// Gives the pool back the stream slots of the requests that ended since the last call, with
    /// one lock, and lets it hand out what fits.
    private func releaseFinishedStreams() {
        guard finishedStreams > 0, let client else { return }
        let released = finishedStreams
        let succeeded = anyFinishedSucceeded
        finishedStreams = 0
        anyFinishedSucceeded = false
        let action = client.withState { state -> ConnectionLifecycle.Action in
            for _ in 0..<released { state.capacities[slot].release() }
            if succeeded { state.capacities[slot].succeeded() }
            return state.lifecycles[slot].streamClosed(openStreams: state.capacities[slot].reserved)
        }
        perform(action)
    }

    private func completed(_ request: PendingRequest, _ result: Result<HTTP2Response, HTTP2StreamError>) {
        request.streamID = nil
        guard let client else { return }
        let now = ContinuousClock.now
        let latency = now - (request.sentAt ?? request.created)
        switch result {
        case .success(let http2Response):
            // Any answer but an authentication failure proves the provider token: the connection
            // stops probing with one stream (a 410 or a 400 is as good as a 200 for that).
            let status = http2Response.status
            finishedStreams += 1
            if status < 500 && status != 403 && status != 429 { anyFinishedSucceeded = true }
            var body: [UInt8] = []
            if let buffer = http2Response.body { body = Array(buffer.readableBytesView) }
            let response = APNSResponse(
                status: http2Response.status,
                apnsID: http2Response.headers.first(named: "apns-id"),
                apnsUniqueID: http2Response.headers.first(named: "apns-unique-id"),
                body: body)
            client.metrics.response(
                status: response.status, reason: response.reason?.rawValue,
                latencyNanoseconds: latency.components.seconds * 1_000_000_000 + latency.components.attoseconds / 1_000_000_000)
            handle(request, response: response, at: now)
        case .failure(let error):
            finishedStreams += 1
            if request.timedOut {
                retry(request, kind: .transport, final: { $0.finish(noResponse: .timeout) })
            } else if error.isUnprocessed {
                resendFree(request)
            } else {
                retry(request, kind: .transport, final: { $0.finish(noResponse: .connection) })
            }
        }
    }

    private func handle(_ request: PendingRequest, response: APNSResponse, at now: ContinuousClock.Instant) {
        guard let client else { return }
        switch APNSDisposition(response) {
        case .delivered, .invalidToken, .permanent:
            request.finish(response: response, at: now)
        case .retryable(.providerTokenExpired):
            guard let tokens = client.tokens, let sent = request.bearerToken,
                request.attempts < client.configuration.retryPolicy.maxAttempts
            else {
                request.finish(response: response)
                return
            }
            do {
                if let next = try tokens.expired(sent) {
                    request.bearerToken = next
                    client.enqueue([request], atFront: true)
                } else {
                    request.finish(response: response)
                }
            } catch {
                request.finish(response: response)
            }
        case .retryable(let kind):
            request.avoidSlot = kind == .serverError ? slot : nil
            retry(request, kind: kind, final: { $0.finish(response: response) })
        }
    }

    /// A retryable failure: back off and resend, or end with `final`.
    private func retry(_ request: PendingRequest, kind: APNSDisposition.RetryKind, final: (PendingRequest) -> Void) {
        guard let client else { return }
        let remaining = request.options.retryUntil.map { $0 - ContinuousClock.now }
        let decision = client.configuration.retryPolicy.decide(
            after: request.attempts, kind: kind, remaining: remaining, random: Double.random(in: 0..<1, using: &random))
        switch decision {
        case .giveUp:
            final(request)
        case .retry(let delay):
            request.bearerToken = nil
            if delay == .zero {
                client.enqueue([request])
            } else {
                eventLoop.scheduleTask(in: TimeAmount(delay)) { client.enqueue([request]) }
            }
        }
    }

    /// REFUSED_STREAM, above a GOAWAY's last-stream-id, or never sent: the server did not process
    /// it, so it goes again at once without counting as an attempt.
    private func resendFree(_ request: PendingRequest) {
        guard let client else { return }
        request.attempts -= 1
        request.freeResends += 1
        client.metrics.freeResend()
        if request.freeResends > client.configuration.maxFreeResends {
            request.attempts += 1
            retry(request, kind: .transport, final: { $0.finish(noResponse: .connection) })
            return
        }
        client.enqueue([request], atFront: true)
    }

    // MARK: HTTP2ClientDelegate

    func http2Client(_ client: HTTP2ClientHandler, completed tag: AnyObject, result: Result<HTTP2Response, HTTP2StreamError>) {
        completed(unsafeDowncast(tag, to: PendingRequest.self), result)
    }

    func http2ClientStreamsFinished(_ client: HTTP2ClientHandler) {
        releaseFinishedStreams()
    }

    func http2Client(_ client: HTTP2ClientHandler, peerMaxConcurrentStreamsChanged value: Int) {
        self.client?.withState { $0.capacities[slot].peerLimitChanged(value) }
    }

    func http2Client(_ client: HTTP2ClientHandler, goAwayReceived goAway: HTTP2GoAway) {
        guard let pool = self.client else { return }
        pool.logger.info(
            "APNs sent GOAWAY", metadata: ["slot": "\(slot)", "last_stream_id": "\(goAway.lastStreamID)", "debug": "\(goAway.debugText)"])
        perform(pool.withState { $0.lifecycles[slot].stopUsing(openStreams: $0.capacities[slot].reserved) })
    }

    func http2ClientClosed(_ client: HTTP2ClientHandler) {
        sent.removeAll()
        channel = nil
        handler = nil
        stopPinging()
        guard let pool = self.client else { return }
        perform(pool.withState { $0.lifecycles[slot].closed(random: Double.random(in: 0..<1, using: &random)) })
    }

    // MARK: Health

    private func startPinging() {
        guard let client else { return }
        stopPinging()
        let interval = TimeAmount(client.configuration.pingInterval)
        let timeout = TimeAmount(client.configuration.pingTimeout)
        pingTask = eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { [weak self] _ in
            guard let self, let handler = self.handler, self.pingDeadline == nil else { return }
            self.pingDeadline = self.eventLoop.scheduleTask(in: timeout) { [weak self] in
                guard let self else { return }
                self.pingDeadline = nil
                self.client?.logger.warning("APNs PING unanswered: replacing the connection", metadata: ["slot": "\(self.slot)"])
                if let pool = self.client {
                    _ = pool.withState { $0.lifecycles[self.slot].stopUsing(openStreams: 0) }
                }
                self.channel?.close(promise: nil)
            }
            handler.ping().whenComplete { [weak self] _ in
                self?.pingDeadline?.cancel()
                self?.pingDeadline = nil
            }
        }
    }

    private func stopPinging() {
        sweepTask?.cancel()
        sweepTask = nil
        pingTask?.cancel()
        pingTask = nil
        pingDeadline?.cancel()
        pingDeadline = nil
    }
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

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
