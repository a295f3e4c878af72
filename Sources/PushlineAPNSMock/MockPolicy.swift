import PushlineAPNSCore

/// APNs' rules as one connection of the mock applies them, as a value: request validation,
/// token or certificate trust, allowed topics, unregistered devices, and the stream-limit ramp
/// (one stream until a valid token succeeds). No I/O and no randomness: `MockConnection` feeds
/// it each request and performs what it says; `MockChaos` decides the injected faults.
struct MockPolicy {
    /// What the policy says about one request: APNs' answer when its rules refuse it (nil when
    /// it passes them), and whether a provider token with a DER signature was newly verified.
    struct Verdict {
        var refusal: Refusal?
        var newDERSignedToken = false
    }

    /// A refusal: status, reason, and for 410 Unregistered the timestamp (ms since the epoch).
    struct Refusal: Hashable {
        var status: Int
        var reason: APNSReason
        var timestamp: Int64?

        init(_ status: Int, _ reason: APNSReason, timestamp: Int64? = nil) {
            self.status = status
            self.reason = reason
            self.timestamp = timestamp
        }

        init(_ rejection: APNSRequestRules.Rejection) {
            self.init(rejection.status, rejection.reason)
        }
    }

    let tokenAuth: Bool
    /// Certificate trust: client certificates are required, and their bundle id decides topics.
    let certificateTrust: Bool
    /// Allowed topics (bundle ids, or whole topics); empty = any.
    let topics: Set<String>
    let maxStreams: UInt32
    let unregistered: UnregisteredRule
    private(set) var tokens: MockTokenTrust
    /// The SETTINGS_MAX_CONCURRENT_STREAMS this connection grants: 1 under token trust until a
    /// valid token succeeded, then `maxStreams`.
    private(set) var limit: UInt32
    private(set) var tokenSucceeded = false

    init(configuration: MockConfiguration, verifier: MockTokenVerifier, unregistered: UnregisteredRule) {
        tokenAuth = configuration.tokenAuth
        certificateTrust = configuration.clientCAFile != nil
        topics = configuration.topics
        maxStreams = UInt32(configuration.maxStreams)
        self.unregistered = unregistered
        tokens = MockTokenTrust(verifier: verifier)
        limit = Self.initialLimit(configuration)
    }

    /// The limit a new connection advertises in its first SETTINGS.
    static func initialLimit(_ configuration: MockConfiguration) -> UInt32 {
        configuration.tokenAuth ? 1 : UInt32(configuration.maxStreams)
    }

    /// Whether the connection still waits for its first valid token (APNs allows one stream).
    var probing: Bool { tokenAuth && !tokenSucceeded }

    // MARK: Requests

    /// A push (`/3/device/<token>`), read from the request's bytes, at `now` (unix seconds; read
    /// only when a token is checked): APNs' request rules, then trust and topic, then the device.
    mutating func push(
        method: UnsafeRawBufferPointer,
        path: UnsafeRawBufferPointer,
        fields: APNSRequestRules.Fields,
        body: UnsafeBufferPointer<UInt8>,
        now: @autoclosure () -> Int64,
        certificateBundleID: @autoclosure () -> String?
    ) -> Verdict {
        let pushType: APNSPushType
        switch APNSRequestRules.check(method: method, path: path, fields: fields, body: body) {
        case .failure(let rejection): return Verdict(refusal: Refusal(rejection))
        case .success(let type): pushType = type
        }
        var verdict = Verdict()
        if tokenAuth {
            let check = tokens.check(fields[.authorization], now: now())
            verdict.newDERSignedToken = check.newDERSignedToken
            if let rejection = check.rejection {
                verdict.refusal = Refusal(rejection)
                return verdict
            }
            guard let topic = fields[.topic] else { return refused(&verdict, 400, .missingTopic) }
            guard topicAllowed(topic, pushType: pushType) else { return refused(&verdict, 400, .topicDisallowed) }
        } else if certificateTrust {
            guard let bundleID = certificateBundleID() else { return refused(&verdict, 403, .badCertificate) }
            let topic = fields[.topic].map { String(decoding: $0, as: UTF8.self) } ?? bundleID + pushType.topicSuffix
            // The certificate covers its bundle id with this push type's suffix.
            guard topic == bundleID + pushType.topicSuffix else { return refused(&verdict, 400, .badTopic) }
            guard topicAllowed(topic, pushType: pushType) else { return refused(&verdict, 400, .topicDisallowed) }
        } else if let topic = fields[.topic], !topicAllowed(topic, pushType: pushType) {
            return refused(&verdict, 400, .topicDisallowed)
        }
        if unregistered.mayMatch, let token = APNSRequestRules.deviceToken(inPath: path),
            let since = unregistered.unregisteredSince(String(decoding: token, as: UTF8.self))
        {
            verdict.refusal = Refusal(410, .unregistered, timestamp: since)
        }
        return verdict
    }

    private func refused(_ verdict: inout Verdict, _ status: Int, _ reason: APNSReason) -> Verdict {
        verdict.refusal = Refusal(status, reason)
        return verdict
    }

    /// The credentials of a broadcast or a channel-management request for the app `bundleID`
    /// (`authorization`: the header's value, nil when absent). A refusal when they may not act
    /// for it: APNs' token answers, 403 BadCertificate, or 403 TopicMismatch for another app.
    mutating func authorize(
        bundleID: String,
        authorization: String?,
        now: @autoclosure () -> Int64,
        certificateBundleID: @autoclosure () -> String?
    ) -> Verdict {
        var verdict = Verdict()
        if tokenAuth {
            let check = tokens.check(authorization, now: now())
            verdict.newDERSignedToken = check.newDERSignedToken
            if let rejection = check.rejection {
                verdict.refusal = Refusal(rejection)
                return verdict
            }
        } else if certificateTrust {
            guard let certified = certificateBundleID() else { return refused(&verdict, 403, .badCertificate) }
            guard certified == bundleID else { return refused(&verdict, 403, .topicMismatch) }
        }
        let topic = APNSPushType.liveactivity.defaultTopic(bundleID: bundleID)
        guard topicAllowed(topic, pushType: .liveactivity) else { return refused(&verdict, 403, .topicMismatch) }
        return verdict
    }

    // MARK: The stream-limit ramp

    /// A request was answered `status` (`outage`: by the timed outage). Returns the new limit to
    /// advertise when this answer is the connection's first success with a valid token: any
    /// status but 403 and 429 proves the token (APNs answers 400 or 410 only after accepting
    /// it); an outage answer proves nothing.
    mutating func answered(status: Int, outage: Bool) -> UInt32? {
        guard probing, !outage, status != 403, status != 429, tokens.current != nil else { return nil }
        tokenSucceeded = true
        limit = maxStreams
        return limit
    }

    // MARK: Topics

    private func topicAllowed(_ topic: UnsafeRawBufferPointer, pushType: APNSPushType) -> Bool {
        topics.isEmpty || topicAllowed(String(decoding: topic, as: UTF8.self), pushType: pushType)
    }

    /// Whether a `pushType` push may go to `topic` under the `--topic` list (any when the list is
    /// empty). As APNs does, the topic must be a listed bundle id plus exactly this push type's
    /// suffix: a widgets push to the bare bundle id is refused, and so is an alert to `….voip`.
    /// A topic listed whole is allowed for a push type whose suffix it carries (or for one without
    /// a suffix, such as `mdm`, whose topic comes from the MDM certificate).
    func topicAllowed(_ topic: String, pushType: APNSPushType) -> Bool {
        if topics.isEmpty { return true }
        let suffix = pushType.topicSuffix
        guard topic.hasSuffix(suffix) else { return false }
        if topics.contains(String(topic.dropLast(suffix.count))) { return true }
        return topics.contains(topic) && (suffix.isEmpty ? !Self.hasAnySuffix(topic) : true)
    }

    /// Whether `topic` ends with some push type's suffix.
    private static func hasAnySuffix(_ topic: String) -> Bool {
        APNSPushType.allCases.contains { !$0.topicSuffix.isEmpty && topic.hasSuffix($0.topicSuffix) }
    }
}
