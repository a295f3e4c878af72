import NIOCore
import PushlineAPNSCore
import PushlineHTTP2
import PushlineHTTP2Server
import PushlineTLS

/// One client connection to the mock: the adapter between the HTTP/2 server handler and the
/// mock's values. `MockPolicy` says what APNs' rules answer (and when the stream limit opens up),
/// `MockChaos` which faults to inject, `MockOutage` (shared) whether the outage answers instead;
/// this class performs what they decide (respond, reset, GOAWAY, close, timers), encodes the
/// responses and counts everything in the stats.
///
/// Lives on its channel's EventLoop (the HTTP/2 handler calls it there), so it keeps plain state.
/// Requests are read as bytes (no `String` per header) and counted in this connection's own
/// counters: the mock must outrun the clients it measures.
final class MockConnection: HTTP2ServerDelegate {
    let shared: MockShared
    private let channel: any Channel
    let id: Int
    private var policy: MockPolicy
    private var chaos: MockChaos
    /// Which requests the timed outage covers (all without `--outage-topic`/`--outage-key-id`).
    private var outageScope: MockOutageScope
    private var limitDropped = false
    let counters: MockStats.ConnectionCounters
    /// The most streams open at once here so far (the shared stats keep the maximum over all).
    private var maxOpenStreams = 0
    /// Reused for every response: answering allocates nothing here.
    var responseFields = HTTP2HeaderFields(capacity: 128)
    private var goingAway = false
    /// The last-stream-id of the GOAWAY this connection sent: later streams are not processed.
    private var goAwayLastStreamID: Int32 = .max
    private var certificateTopic: String??
    private var delayed: [Int32: Scheduled<Void>] = [:]
    private var idleTimer: Scheduled<Void>?

    var configuration: MockConfiguration { shared.configuration }

    init(shared: MockShared, channel: any Channel) {
        self.shared = shared
        self.channel = channel
        self.id = shared.nextConnectionID()
        self.policy = MockPolicy(configuration: shared.configuration, verifier: shared.verifier, unregistered: shared.unregistered)
        self.chaos = MockChaos(configuration: shared.configuration, connection: id)
        self.outageScope = MockOutageScope(shared.configuration)
        self.counters = shared.stats.connectionOpened(id)
        shared.stats.advertised(limit: Int(policy.limit))
    }

    // MARK: HTTP2ServerDelegate

    func http2Server(_ connection: HTTP2ServerHandler, didReceive request: HTTP2ServerRequest) {
        if request.streamID > goAwayLastStreamID {
            // Arrived in the same read as the stream that triggered GOAWAY: not processed, as the
            // GOAWAY said. Reset it so the connection can finish closing.
            connection.resetStream(request.streamID, errorCode: .refusedStream)
            return
        }
        if connection.openStreams > maxOpenStreams {
            maxOpenStreams = connection.openStreams
            shared.stats.streamsOpen(maxOpenStreams, limit: Int(policy.limit))
        }
        if policy.probing {
            shared.stats.streamsOpenWhileProbing(connection.openStreams)
        }
        armIdleTimer(connection)

        if !configuration.protocolErrorTokens.isEmpty, !goingAway,
            configuration.protocolErrorTokens.contains(String(request.path.dropFirst(APNSDestination.devicePathPrefix.count)))
        {
            endWithProtocolError(connection, at: request.streamID)
            return
        }
        let events = chaos.streamStarted()
        if events.contains(.closeAbruptly) {
            shared.stats.abruptClose()
            connection.closeAbruptly()
            return
        }
        if events.contains(.goAway), !goingAway {
            goingAway = true
            goAwayLastStreamID = request.streamID
            shared.stats.goawaySent()
            connection.sendGoAway(
                lastStreamID: request.streamID,
                errorCode: .noError,
                debugData: ByteBuffer(string: #"{"reason":"Shutdown"}"#)
            )
        }
        if events.contains(.dropLimit) {
            dropLimit(connection)
        }

        // The timed outage answers before any rule: its token is not even looked at (but for its
        // `kid` when the outage is limited to one key).
        let refusal = outageAnswer(request)
        let outage = refusal != nil
        let answer =
            if let refusal {
                MockAnswer(api: MockAnswer.API(path: request.path), status: refusal.status, reason: refusal.reason)
            } else {
                answer(request)
            }
        // A request whose token passed (whatever the answer about the device) opens the connection
        // up; an outage answer never does, as APNs refusing everything has accepted no token.
        if let raised = policy.answered(status: answer.status, outage: outage), !limitDropped {
            connection.setMaxConcurrentStreams(raised)
            shared.stats.advertised(limit: Int(raised))
        }
        // When the request arrived (wall clock), for `--record`; read only when recording.
        let received = shared.recorder == nil ? 0 : RequestRecorder.nowMilliseconds()
        let delay = TimeAmount(chaos.responseDelay())
        if delay > .zero {
            let streamID = request.streamID
            delayed[streamID] = connection.eventLoop?.assumeIsolated().scheduleTask(in: delay) { [weak self, weak connection] in
                guard let self, let connection else { return }
                self.delayed[streamID] = nil
                self.respond(connection, request, answer, outage: outage, received: received)
            }
        } else {
            respond(connection, request, answer, outage: outage, received: received)
        }
    }

    /// The timed outage's answer to `request`: nil when none is pending, or when its scope does
    /// not cover this request (then the request is not counted toward its start either).
    private func outageAnswer(_ request: HTTP2ServerRequest) -> (status: Int, reason: APNSReason)? {
        guard shared.outagePending else { return nil }
        if !outageScope.coversEverything {
            let certificateTrust = policy.certificateTrust
            let covered = request.withUnsafeFields {
                outageScope.covers($0, certificateBundleID: certificateTrust ? certificateBundleID() : nil)
            }
            guard covered else { return nil }
        }
        return shared.outageAnswer()
    }

    /// GOAWAY PROTOCOL_ERROR naming `streamID` as the last, then the TCP close on the next tick
    /// (after the frame is flushed): no stream is answered.
    private func endWithProtocolError(_ connection: HTTP2ServerHandler, at streamID: Int32) {
        goingAway = true
        goAwayLastStreamID = streamID
        shared.stats.protocolErrorGoAway()
        connection.sendGoAway(lastStreamID: streamID, errorCode: .protocolError, debugData: ByteBuffer(string: "malformed request"))
        connection.eventLoop?.assumeIsolated().execute { [weak connection] in connection?.closeAbruptly() }
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

    /// The client's polite close (or its answer to ours): counted; nghttp2 ends the connection
    /// once the open streams are done.
    func http2Server(_ connection: HTTP2ServerHandler, goAwayReceived goAway: HTTP2GoAway) {
        shared.stats.goawayReceived()
    }

    /// GOAWAYs the mock decides are counted where it decides them (`goaways_sent`); nghttp2 sends
    /// others itself. INTERNAL_ERROR is the RST_STREAM rate limit's (the mock never sends one).
    func http2Server(_ connection: HTTP2ServerHandler, goAwaySent goAway: HTTP2GoAway) {
        if goAway.errorCode == .internalError { shared.stats.resetLimitGoAway() }
    }

    func http2Server(_ connection: HTTP2ServerHandler, resetReceived streamID: Int32, errorCode: HTTP2ErrorCode) {
        counters.resetsReceived.wrappingAdd(1, ordering: .releasing)
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
        let push: MockPolicy.Verdict? = request.withUnsafeFields { all in
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
            return pushVerdict(method: method, path: path, fields: fields, body: request.body)
        }
        if let push {
            if push.newDERSignedToken { shared.stats.derSignedToken() }
            if let refusal = push.refusal {
                return MockAnswer(status: refusal.status, reason: refusal.reason, timestamp: refusal.timestamp)
            }
            return chaosAnswer(api: .push)
        }
        let body = request.body.map { Array($0.readableBytesView) } ?? []
        let headers = request.headers.map { (name: $0.name, value: $0.value) }
        return MockAnswer.API(path: request.path) == .broadcast
            ? broadcastAnswer(method: request.method, path: request.path, headers: headers, body: body)
            : channelAnswer(method: request.method, path: request.path, headers: headers, body: body)
    }

    private func pushVerdict(
        method: UnsafeRawBufferPointer,
        path: UnsafeRawBufferPointer,
        fields: APNSRequestRules.Fields,
        body: ByteBuffer?
    ) -> MockPolicy.Verdict {
        guard let body else {
            return policy.push(
                method: method,
                path: path,
                fields: fields,
                body: UnsafeBufferPointer(start: nil, count: 0),
                now: self.configuration.now(),
                certificateBundleID: certificateBundleID()
            )
        }
        return body.withUnsafeReadableBytes { raw in
            policy.push(
                method: method,
                path: path,
                fields: fields,
                body: raw.bindMemory(to: UInt8.self),
                now: self.configuration.now(),
                certificateBundleID: certificateBundleID()
            )
        }
    }

    /// A request APNs' rules accepted: the chaos roll's fault, or 200.
    private func chaosAnswer(api: MockAnswer.API) -> MockAnswer {
        guard let failure = chaos.failure() else { return MockAnswer(api: api, status: 200) }
        return MockAnswer(api: api, status: failure.status, reason: failure.reason)
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
        if let refusal = authorize(bundleID: broadcast.bundleID, authorization: broadcast.authorization) {
            return MockAnswer(api: .broadcast, status: refusal.status, reason: refusal.reason)
        }
        if let refusal = shared.channels.withLock({ MockChannelAPI.broadcastRefusal(broadcast, store: $0) }) {
            return MockAnswer(api: .broadcast, status: refusal.status, reason: refusal.reason)
        }
        return chaosAnswer(api: .broadcast)
    }

    /// A channel-management request: the path, the credentials, then the API over the store.
    private func channelAnswer(method: String, path: String, headers: [(name: String, value: String)], body: [UInt8]) -> MockAnswer {
        guard let route = MockChannelAPI.route(path) else { return MockAnswer(api: .channels, status: 404, reason: .badPath) }
        let authorization = headers.first { $0.name == "authorization" }?.value
        if let refusal = authorize(bundleID: route.bundleID, authorization: authorization) {
            return MockAnswer(api: .channels, status: refusal.status, reason: refusal.reason)
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

    private func authorize(bundleID: String, authorization: String?) -> MockPolicy.Refusal? {
        let verdict = policy.authorize(
            bundleID: bundleID,
            authorization: authorization,
            now: configuration.now(),
            certificateBundleID: certificateBundleID()
        )
        if verdict.newDERSignedToken { shared.stats.derSignedToken() }
        return verdict.refusal
    }

    // MARK: Chaos (performed)

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
            connection.setMaxConcurrentStreams(self.policy.limit)
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
