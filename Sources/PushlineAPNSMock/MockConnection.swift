import NIOCore
import PushlineAPNSCore
import PushlineHTTP2
import PushlineHTTP2Server
import PushlineTLS

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One client connection to the mock: applies APNs' rules to each request, enforces token trust
/// and the stream-limit ramp, injects the configured chaos, and counts everything.
///
/// Lives on its channel's EventLoop (the HTTP/2 handler calls it there), so it keeps plain state.
/// Requests are read as bytes (no `String` per header) and counted in this connection's own
/// counters: the mock must outrun the clients it measures.
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
    /// `currentToken`'s JWT as bytes, compared with each request's authorization header.
    private var currentJWT: [UInt8] = []
    private let counters: MockStats.ConnectionCounters
    /// The most streams open at once here so far (the shared stats keep the maximum over all).
    private var maxOpenStreams = 0
    /// Reused for every response: answering allocates nothing here.
    private var responseFields = HTTP2HeaderFields(capacity: 128)
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
        self.counters = shared.stats.connectionOpened(id)
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
        if connection.openStreams > maxOpenStreams {
            maxOpenStreams = connection.openStreams
            shared.stats.streamsOpen(maxOpenStreams, limit: Int(limit))
        }
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
                lastStreamID: request.streamID,
                errorCode: .noError,
                debugData: ByteBuffer(string: #"{"reason":"Shutdown"}"#)
            )
        }
        if configuration.limitDropEvery > 0, streamsStarted % configuration.limitDropEvery == 0 {
            dropLimit(connection)
        }

        // The timed outage answers before any rule: its token is not even looked at.
        let refusal = shared.outageAnswer()
        let outage = refusal != nil
        let answer =
            if let refusal {
                MockAnswer(api: MockAnswer.API(path: request.path), status: refusal.status, reason: refusal.reason)
            } else {
                answer(request)
            }
        let status = answer.status
        // A request whose token passed (whatever the answer about the device) opens the connection
        // up; an outage answer never does, as APNs refusing everything has accepted no token.
        if !outage, status != 403, status != 429, currentToken != nil, configuration.tokenAuth, !tokenSucceeded {
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
                self.respond(connection, request, answer, outage: outage)
            }
        } else {
            respond(connection, request, answer, outage: outage)
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
        shared.stats.connectionClosed(id)
    }

    // MARK: Answering

    /// The answer to a request, by APNs' rules in order: a push's read from the request's bytes,
    /// a broadcast's or a channel-management request's (rare) from its strings.
    private func answer(_ request: HTTP2ServerRequest) -> MockAnswer {
        let push: (Int, APNSReason?, Int64?)? = request.withUnsafeFields { all in
            var method = UnsafeRawBufferPointer(start: nil, count: 0)
            var path = method
            var fields = APNSRequestRules.Fields()
            all.forEach { name, value, _ in
                if name.first == UInt8(ascii: ":") {
                    if name.equals(":path") {
                        path = value
                    } else if name.equals(":method") {
                        method = value
                    }
                } else {
                    fields.add(name: name, value: value)
                }
            }
            guard MockAnswer.API(path: path) == .push else { return nil }
            return answer(method: method, path: path, fields: fields, body: request.body)
        }
        if let (status, reason, timestamp) = push {
            return MockAnswer(status: status, reason: reason, timestamp: timestamp)
        }
        let body = request.body.map { Array($0.readableBytesView) } ?? []
        let headers = request.headers.map { (name: $0.name, value: $0.value) }
        return MockAnswer.API(path: request.path) == .broadcast
            ? broadcastAnswer(method: request.method, path: request.path, headers: headers, body: body)
            : channelAnswer(method: request.method, path: request.path, headers: headers, body: body)
    }

    /// A broadcast: APNs' request rules, then the credentials, then the channel (it exists, and
    /// takes the expiration), then the chaos a push gets too.
    private func broadcastAnswer(method: String, path: String, headers: [(name: String, value: String)], body: [UInt8]) -> MockAnswer {
        let checked = body.withUnsafeBufferPointer { APNSBroadcastRules.check(method: method, path: path, headers: headers, body: $0) }
        let broadcast: APNSBroadcastRules.Accepted
        switch checked {
        case .failure(let rejection): return MockAnswer(api: .broadcast, rejection)
        case .success(let accepted): broadcast = accepted
        }
        if let rejection = authorize(bundleID: broadcast.bundleID, authorization: broadcast.authorization) {
            return MockAnswer(api: .broadcast, rejection)
        }
        if let refusal = shared.channels.withLock({ MockChannelAPI.broadcastRefusal(broadcast, store: $0) }) {
            return MockAnswer(api: .broadcast, status: refusal.status, reason: refusal.reason)
        }
        let roll = random.unit()
        if roll < configuration.rate429 { return MockAnswer(api: .broadcast, status: 429, reason: .tooManyRequests) }
        if roll < configuration.rate429 + configuration.rate500 {
            return MockAnswer(api: .broadcast, status: 500, reason: .internalServerError)
        }
        if roll < configuration.rate429 + configuration.rate500 + configuration.rate503 {
            return MockAnswer(api: .broadcast, status: 503, reason: .serviceUnavailable)
        }
        return MockAnswer(api: .broadcast, status: 200)
    }

    /// A channel-management request: the path, the credentials, then the API over the store.
    private func channelAnswer(method: String, path: String, headers: [(name: String, value: String)], body: [UInt8]) -> MockAnswer {
        guard let route = MockChannelAPI.route(path) else { return MockAnswer(api: .channels, status: 404, reason: .badPath) }
        let authorization = headers.first { $0.name == "authorization" }?.value
        if let rejection = authorize(bundleID: route.bundleID, authorization: authorization) {
            return MockAnswer(api: .channels, rejection)
        }
        let (answer, channels) = shared.channels.withLock { store in
            let answer = MockChannelAPI.answer(
                method: method,
                bundleID: route.bundleID,
                resource: route.resource,
                headers: headers,
                body: body,
                store: &store
            )
            return (answer, store.count)
        }
        shared.stats.channelRequestAnswered(created: answer.status == 201, deleted: answer.status == 204, channels: channels)
        return MockAnswer(api: .channels, status: answer.status, reason: answer.reason, channelID: answer.channelID, body: answer.body)
    }

    /// The credentials of a broadcast or channel-management request for the app `bundleID`: nil
    /// when they may act for it, else APNs' answer (403 TopicMismatch for another app's).
    private func authorize(bundleID: String, authorization: String?) -> APNSRequestRules.Rejection? {
        let topic = APNSPushType.liveactivity.defaultTopic(bundleID: bundleID)
        if configuration.tokenAuth {
            let rejection: APNSRequestRules.Rejection?
            if var authorization {
                rejection = authorization.withUTF8 { checkProviderToken(UnsafeRawBufferPointer($0)) }
            } else {
                rejection = checkProviderToken(nil)
            }
            if let rejection { return rejection }
        } else if configuration.clientCAFile != nil {
            guard let certified = certificateBundleID() else { return .init(403, .badCertificate) }
            guard certified == bundleID else { return .init(403, .topicMismatch) }
        }
        guard shared.topicAllowed(topic, pushType: .liveactivity) else { return .init(403, .topicMismatch) }
        return nil
    }

    private func answer(
        method: UnsafeRawBufferPointer,
        path: UnsafeRawBufferPointer,
        fields: APNSRequestRules.Fields,
        body: ByteBuffer?
    ) -> (Int, APNSReason?, Int64?) {
        let checked: Result<APNSPushType, APNSRequestRules.Rejection>
        if let body {
            checked = body.withUnsafeReadableBytes { raw in
                APNSRequestRules.check(method: method, path: path, fields: fields, body: raw.bindMemory(to: UInt8.self))
            }
        } else {
            checked = APNSRequestRules.check(
                method: method,
                path: path,
                fields: fields,
                body: UnsafeBufferPointer(start: nil, count: 0)
            )
        }
        let pushType: APNSPushType
        switch checked {
        case .failure(let rejection): return (rejection.status, rejection.reason, nil)
        case .success(let type): pushType = type
        }

        if configuration.tokenAuth {
            if let rejection = checkProviderToken(fields[.authorization]) {
                return (rejection.status, rejection.reason, nil)
            }
            guard let topic = fields[.topic] else { return (400, .missingTopic, nil) }
            guard topicAllowed(topic, pushType: pushType) else { return (400, .topicDisallowed, nil) }
        } else if configuration.clientCAFile != nil {
            guard let bundleID = certificateBundleID() else { return (403, .badCertificate, nil) }
            let topic = fields[.topic].map { String(decoding: $0, as: UTF8.self) } ?? bundleID + pushType.topicSuffix
            // The certificate covers its bundle id with this push type's suffix.
            guard topic == bundleID + pushType.topicSuffix else { return (400, .badTopic, nil) }
            guard shared.topicAllowed(topic, pushType: pushType) else { return (400, .topicDisallowed, nil) }
        } else if let topic = fields[.topic], !topicAllowed(topic, pushType: pushType) {
            return (400, .topicDisallowed, nil)
        }

        if shared.unregistered.mayMatch, let token = APNSRequestRules.deviceToken(inPath: path),
            let since = shared.unregistered.unregisteredSince(String(decoding: token, as: UTF8.self))
        {
            return (410, .unregistered, since)
        }
        let roll = random.unit()
        if roll < configuration.rate429 { return (429, .tooManyRequests, nil) }
        if roll < configuration.rate429 + configuration.rate500 { return (500, .internalServerError, nil) }
        if roll < configuration.rate429 + configuration.rate500 + configuration.rate503 {
            return (503, .serviceUnavailable, nil)
        }
        return (200, nil, nil)
    }

    private func topicAllowed(_ topic: UnsafeRawBufferPointer, pushType: APNSPushType) -> Bool {
        configuration.topics.isEmpty || shared.topicAllowed(String(decoding: topic, as: UTF8.self), pushType: pushType)
    }

    /// Token trust: nil when the request's provider token is good, else APNs' answer. The token a
    /// connection already verified is only checked for age (ES256 verification costs more than
    /// everything else a request does here), by comparing bytes; a new one is verified, and may
    /// replace the connection's token only 20 minutes (by `iat`) after it.
    private func checkProviderToken(_ authorization: UnsafeRawBufferPointer?) -> APNSRequestRules.Rejection? {
        let now = configuration.now()
        if let current = currentToken, let authorization, isCurrentToken(authorization) {
            return now - current.issuedAt > 3600 ? .init(403, .expiredProviderToken) : nil
        }
        let text = authorization.map { String(decoding: $0, as: UTF8.self) }
        switch shared.verifier.verify(authorization: text, now: now) {
        case .failure(let rejection):
            return rejection
        case .success(let verified):
            if let current = currentToken, verified.issuedAt - current.issuedAt < 20 * 60 {
                return .init(429, .tooManyProviderTokenUpdates)
            }
            currentToken = verified
            currentJWT = Array(verified.jwt.utf8)
            if verified.derSignature { shared.stats.derSignedToken() }
            return nil
        }
    }

    /// Whether `authorization` is "bearer " (any case) followed by exactly the current JWT.
    private func isCurrentToken(_ authorization: UnsafeRawBufferPointer) -> Bool {
        let scheme: StaticString = "bearer "
        let schemeCount = scheme.utf8CodeUnitCount
        guard authorization.count == currentJWT.count + schemeCount else { return false }
        for index in 0..<schemeCount {
            let byte = authorization[index]
            let lowered = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            if lowered != scheme.utf8Start[index] { return false }
        }
        return currentJWT.withUnsafeBytes { jwt in
            jwt.count == 0 || memcmp(authorization.baseAddress! + schemeCount, jwt.baseAddress!, jwt.count) == 0
        }
    }

    private func respond(_ connection: HTTP2ServerHandler, _ request: HTTP2ServerRequest, _ answer: MockAnswer, outage: Bool) {
        let status = answer.status
        let reason = answer.reason
        responseFields.removeAll()
        // The id the request came with, echoed (APNs makes one up when it had none): `apns-id`
        // for a push, `apns-request-id` for a broadcast or a channel-management request. A unique
        // value per response: indexing it in HPACK would only churn both dynamic tables.
        let idHeader = answer.api == .push ? "apns-id" : "apns-request-id"
        let echoed: Void? = request.withHeaderValue(named: idHeader) { id in
            responseFields.append(idHeader, value: id, neverIndex: true)
        }
        if echoed == nil {
            shared.ids.withNext { responseFields.append(idHeader, value: $0, neverIndex: true) }
        }
        // APNs' development environment sends apns-unique-id with every push; a delivered
        // broadcast gets one in every environment.
        if (answer.api == .push && configuration.uniqueIDs) || (answer.api == .broadcast && status == 200) {
            shared.ids.withNext { responseFields.append("apns-unique-id", value: $0, neverIndex: true) }
        }
        if let channelID = answer.channelID {
            responseFields.append("apns-channel-id", channelID, neverIndex: true)
        }
        var body: ByteBuffer?
        if let reason {
            body = ByteBuffer(string: APNSErrorBody.make(reason: reason.rawValue, timestamp: answer.timestamp))
            responseFields.append("content-type", "application/json")
        } else if let json = answer.body {
            body = ByteBuffer(string: json)
            responseFields.append("content-type", "application/json")
        }
        guard connection.respond(to: request.streamID, status: status, fields: responseFields, body: body) else { return }
        shared.stats.answered(status: status, reason: reason?.rawValue, counters: counters)
        if answer.api == .broadcast { shared.stats.broadcastAnswered(status: status) }
        if outage { shared.stats.outageAnswered() }
        if let recorder = shared.recorder {
            recorder.record(
                RequestRecorder.Entry(
                    connection: id,
                    stream: request.streamID,
                    token: Self.token(of: request.path),
                    headers: request.headers.filter { $0.name != "authorization" }.map { ($0.name, $0.value) },
                    payloadBytes: request.body?.readableBytes ?? 0,
                    status: status,
                    reason: reason?.rawValue
                )
            )
        }
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

extension UnsafeRawBufferPointer {
    /// Whether these bytes are exactly `text`'s UTF-8.
    fileprivate func equals(_ text: StaticString) -> Bool {
        guard count == text.utf8CodeUnitCount else { return false }
        let expected = text.utf8Start
        for index in 0..<count where self[index] != expected[index] { return false }
        return true
    }
}
