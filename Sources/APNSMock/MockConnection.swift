import APNSCore
import NIOCore
import NIONGHTTP2
import NIOOpenSSL

/// One client connection to the mock: applies APNs' rules to each request, enforces token trust
/// and the stream-limit ramp, injects the configured chaos, and counts everything.
///
/// Lives on its channel's EventLoop (the HTTP/2 handler calls it there), so it keeps plain state.
final class MockConnection: HTTP2ServerDelegate {
    private let shared: MockShared
    private let channel: any Channel
    let id: Int
    private var random: SplitMix64

    /// The limit this connection advertises when not dropped: 1 until a valid token succeeded.
    private var limit: UInt32
    private var limitDropped = false
    private var tokenSucceeded = false
    private var currentToken: MockTokenVerifier.Verified?
    private var streamsStarted = 0
    private var goingAway = false
    /// The last-stream-id of the GOAWAY this connection sent: later streams are not processed.
    private var goAwayLastStreamID: Int32 = .max
    private var certificateTopic: String??
    private var delayed: [Int32: Scheduled<Void>] = [:]
    private var idleTimer: Scheduled<Void>?

    private var configuration: MockConfiguration { shared.configuration }

    init(shared: MockShared, channel: any Channel) {
        self.shared = shared
        self.channel = channel
        self.id = shared.nextConnectionID()
        self.random = SplitMix64(seed: shared.configuration.seed &+ UInt64(id) &* 0x2545_F491_4F6C_DD1D)
        self.limit = shared.configuration.tokenAuth ? 1 : UInt32(shared.configuration.maxStreams)
        shared.stats.connectionOpened()
        shared.stats.advertised(limit: Int(limit))
    }

    /// The limit a new connection advertises in its first SETTINGS.
    static func initialLimit(_ configuration: MockConfiguration) -> UInt32 {
        configuration.tokenAuth ? 1 : UInt32(configuration.maxStreams)
    }

    // MARK: HTTP2ServerDelegate

    func http2Server(_ connection: HTTP2ServerHandler, didReceive request: HTTP2ServerRequest) {
        if request.streamID > goAwayLastStreamID {
            // Arrived in the same read as the stream that triggered GOAWAY: not processed, as the
            // GOAWAY said. Reset it so the connection can finish closing.
            connection.resetStream(request.streamID, errorCode: .refusedStream)
            return
        }
        streamsStarted += 1
        shared.stats.streamsOpen(connection.openStreams, limit: Int(limit))
        if configuration.tokenAuth, !tokenSucceeded {
            shared.stats.streamsOpenWhileProbing(connection.openStreams)
        }
        armIdleTimer(connection)

        if configuration.closeEvery > 0, streamsStarted % configuration.closeEvery == 0 {
            shared.stats.abruptClose()
            connection.closeAbruptly()
            return
        }
        if configuration.goawayEvery > 0, streamsStarted % configuration.goawayEvery == 0, !goingAway {
            goingAway = true
            goAwayLastStreamID = request.streamID
            shared.stats.goawaySent()
            connection.sendGoAway(
                lastStreamID: request.streamID, errorCode: .noError,
                debugData: ByteBuffer(string: #"{"reason":"Shutdown"}"#))
        }
        if configuration.limitDropEvery > 0, streamsStarted % configuration.limitDropEvery == 0 {
            dropLimit(connection)
        }

        let (status, reason, timestamp, token) = answer(request)
        // A request whose token passed (whatever the answer about the device) opens the connection up.
        if status != 403, status != 429, currentToken != nil, configuration.tokenAuth, !tokenSucceeded {
            tokenSucceeded = true
            limit = UInt32(configuration.maxStreams)
            if !limitDropped {
                connection.setMaxConcurrentStreams(limit)
                shared.stats.advertised(limit: Int(limit))
            }
        }
        let delay = responseDelay()
        if delay > .zero {
            let streamID = request.streamID
            delayed[streamID] = connection.eventLoop?.assumeIsolated().scheduleTask(in: delay) { [weak self, weak connection] in
                guard let self, let connection else { return }
                self.delayed[streamID] = nil
                self.respond(connection, request, status: status, reason: reason, timestamp: timestamp, token: token)
            }
        } else {
            respond(connection, request, status: status, reason: reason, timestamp: timestamp, token: token)
        }
    }

    func http2Server(_ connection: HTTP2ServerHandler, streamClosed streamID: Int32, errorCode: HTTP2ErrorCode) {
        if let task = delayed.removeValue(forKey: streamID) { task.cancel() }
        if goingAway, connection.openStreams == 0 {
            // Every answered stream is out: close on the next tick, after this write is flushed.
            connection.eventLoop?.assumeIsolated().execute { [weak connection] in connection?.closeAbruptly() }
        }
    }

    func http2ServerLimitViolated(_ connection: HTTP2ServerHandler) {
        shared.stats.limitViolated()
    }

    func http2ServerClosed(_ connection: HTTP2ServerHandler) {
        for task in delayed.values { task.cancel() }
        delayed.removeAll()
        idleTimer?.cancel()
        shared.stats.connectionClosed()
    }

    // MARK: Answering

    /// Status, reason, 410 timestamp and device token for a request, by APNs' rules in order.
    private func answer(_ request: HTTP2ServerRequest) -> (Int, APNSReason?, Int64?, String) {
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(request.headers.count)
        for header in request.headers { headers.append((header.name, header.value)) }
        let checked: Result<APNSRequestRules.Accepted, APNSRequestRules.Rejection>
        if let body = request.body {
            checked = body.withUnsafeReadableBytes { raw in
                APNSRequestRules.check(
                    method: request.method, path: request.path, headers: headers,
                    body: raw.bindMemory(to: UInt8.self))
            }
        } else {
            checked = APNSRequestRules.check(
                method: request.method, path: request.path, headers: headers,
                body: UnsafeBufferPointer(start: nil, count: 0))
        }
        let accepted: APNSRequestRules.Accepted
        switch checked {
        case .failure(let rejection):
            return (rejection.status, rejection.reason, nil, Self.token(of: request.path))
        case .success(let value):
            accepted = value
        }
        let token = accepted.deviceToken

        if configuration.tokenAuth {
            if let rejection = checkProviderToken(accepted.authorization) {
                return (rejection.status, rejection.reason, nil, token)
            }
            guard let topic = accepted.topic else { return (400, .missingTopic, nil, token) }
            guard shared.topicAllowed(topic) else { return (400, .topicDisallowed, nil, token) }
        } else if configuration.clientCAFile != nil {
            guard let bundleID = certificateBundleID() else { return (403, .badCertificate, nil, token) }
            let topic = accepted.topic ?? bundleID
            let covered = topic == bundleID || APNSPushType.allCases.contains {
                !$0.topicSuffix.isEmpty && topic == bundleID + $0.topicSuffix
            }
            guard covered else { return (400, .badTopic, nil, token) }
            guard shared.topicAllowed(topic) else { return (400, .topicDisallowed, nil, token) }
        } else if let topic = accepted.topic, !shared.topicAllowed(topic) {
            return (400, .topicDisallowed, nil, token)
        }

        if let since = shared.unregistered.unregisteredSince(token) {
            return (410, .unregistered, since, token)
        }
        let roll = random.unit()
        if roll < configuration.rate429 { return (429, .tooManyRequests, nil, token) }
        if roll < configuration.rate429 + configuration.rate500 { return (500, .internalServerError, nil, token) }
        if roll < configuration.rate429 + configuration.rate500 + configuration.rate503 {
            return (503, .serviceUnavailable, nil, token)
        }
        return (200, nil, nil, token)
    }

    /// Token trust: nil when the request's provider token is good, else APNs' answer. The token a
    /// connection already verified is only checked for age (ES256 verification costs more than
    /// everything else a request does here); a new one is verified, and may replace the
    /// connection's token only 20 minutes (by `iat`) after it.
    private func checkProviderToken(_ authorization: String?) -> APNSRequestRules.Rejection? {
        let now = configuration.now()
        if let current = currentToken, let authorization, authorization.utf8.count == current.jwt.utf8.count + 7,
            authorization.hasSuffix(current.jwt), authorization.prefix(7).lowercased() == "bearer "
        {
            return now - current.issuedAt > 3600 ? .init(403, .expiredProviderToken) : nil
        }
        switch shared.verifier.verify(authorization: authorization, now: now) {
        case .failure(let rejection):
            return rejection
        case .success(let verified):
            if let current = currentToken, verified.issuedAt - current.issuedAt < 20 * 60 {
                return .init(429, .tooManyProviderTokenUpdates)
            }
            currentToken = verified
            return nil
        }
    }

    private func respond(
        _ connection: HTTP2ServerHandler, _ request: HTTP2ServerRequest,
        status: Int, reason: APNSReason?, timestamp: Int64?, token: String
    ) {
        let apnsID = request.headers.first(named: "apns-id") ?? shared.ids.next()
        var body: ByteBuffer?
        if let reason {
            body = ByteBuffer(string: APNSErrorBody.make(reason: reason.rawValue, timestamp: timestamp))
        }
        var headers = [HTTP2Header("apns-id", apnsID)]
        if body != nil { headers.append(HTTP2Header("content-type", "application/json")) }
        guard connection.respond(to: request.streamID, status: status, headers: headers, body: body) else { return }
        shared.stats.answered(status: status, reason: reason?.rawValue, connection: id)
        shared.recorder?.record(
            RequestRecorder.Entry(
                connection: id, stream: request.streamID, token: token,
                headers: request.headers.filter { $0.name != "authorization" }.map { ($0.name, $0.value) },
                payloadBytes: request.body?.readableBytes ?? 0, status: status, reason: reason?.rawValue))
    }

    // MARK: Chaos

    private func responseDelay() -> TimeAmount {
        var milliseconds = Double(configuration.latencyMilliseconds)
        if configuration.jitterMilliseconds > 0 {
            milliseconds += random.unit() * Double(configuration.jitterMilliseconds)
        }
        return .nanoseconds(Int64(milliseconds * 1_000_000))
    }

    /// Lowers the advertised limit to 1 for a while. Streams held for latency beyond the first are
    /// refused (REFUSED_STREAM: not processed, the client resends them), as APNs does.
    private func dropLimit(_ connection: HTTP2ServerHandler) {
        guard !limitDropped else { return }
        limitDropped = true
        connection.setMaxConcurrentStreams(1)
        for streamID in delayed.keys.sorted().dropFirst() {
            delayed.removeValue(forKey: streamID)?.cancel()
            connection.refuseStream(streamID)
            shared.stats.streamRefused()
        }
        connection.eventLoop?.assumeIsolated().scheduleTask(in: .milliseconds(Int64(configuration.limitDropMilliseconds))) {
            [weak self, weak connection] in
            guard let self, let connection else { return }
            self.limitDropped = false
            connection.setMaxConcurrentStreams(self.limit)
        }
    }

    private func armIdleTimer(_ connection: HTTP2ServerHandler) {
        guard configuration.idleCloseSeconds > 0 else { return }
        idleTimer?.cancel()
        idleTimer = connection.eventLoop?.assumeIsolated().scheduleTask(in: .seconds(Int64(configuration.idleCloseSeconds))) {
            [weak self, weak connection] in
            guard let self, let connection else { return }
            self.goingAway = true
            self.shared.stats.goawaySent()
            connection.sendGoAway(errorCode: .noError, debugData: ByteBuffer(string: #"{"reason":"IdleTimeout"}"#))
            if connection.openStreams == 0 { connection.closeAbruptly() }
        }
    }

    // MARK: Helpers

    /// The bundle id from the client certificate's subject (UID, as Apple issues them), cached.
    private func certificateBundleID() -> String? {
        if let cached = certificateTopic { return cached }
        let handler = try? channel.pipeline.syncOperations.handler(type: TLSHandler.self)
        let subject = handler?.peerCertificate?.subject
        var bundleID = subject?.userID
        if bundleID == nil, let commonName = subject?.commonName, let colon = commonName.lastIndex(of: ":") {
            bundleID = String(commonName[commonName.index(after: colon)...]).trimmingSpaces()
        }
        certificateTopic = .some(bundleID)
        return bundleID
    }

    private static func token(of path: String) -> String {
        let prefix = "/3/device/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : ""
    }
}

@available(*, unavailable)
extension MockConnection: Sendable {}
