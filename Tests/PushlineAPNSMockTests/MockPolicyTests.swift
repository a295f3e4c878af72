import PushlineAPNSCore
import PushlineTLS
import Testing

@testable import PushlineAPNSMock

/// APNs' rules as one mock connection applies them, without sockets: a request in, a verdict
/// out, the clock in hand.
@Suite struct MockPolicyTests {
    static let keyID = "ABC123DEFG"
    static let teamID = "DEF123GHIJ"
    static let bundleID = "com.example.app"
    static let token = String(repeating: "ab", count: 32)
    static let now: Int64 = 1_800_000_000

    let key: PrivateKey

    init() throws {
        key = try PrivateKey.generateP256()
    }

    func configuration(tokenAuth: Bool = true, _ configure: (inout MockConfiguration) -> Void = { _ in }) throws -> MockConfiguration {
        var configuration = MockConfiguration()
        configuration.maxStreams = 500
        if tokenAuth {
            configuration.authKeys[Self.keyID] = .init(keyID: Self.keyID, teamID: Self.teamID, publicKeyPEM: try key.publicKeyPEM())
        }
        configure(&configuration)
        return configuration
    }

    func policy(_ configuration: MockConfiguration) throws -> MockPolicy {
        MockPolicy(
            configuration: configuration,
            verifier: try MockTokenVerifier(configuration.authKeys),
            unregistered: UnregisteredRule(listed: configuration.unregisteredTokens, fraction: configuration.unregisteredFraction)
        )
    }

    func bearer(issuedAt: Int64) throws -> String {
        let jwt = try ProviderToken(keyID: Self.keyID, teamID: Self.teamID, issuedAt: issuedAt) { try ES256.sign($0, with: key) }.jwt
        return "bearer \(jwt)"
    }

    /// The verdict on an alert push to `token` with `headers` (apns-push-type alert is added).
    func push(
        _ policy: inout MockPolicy,
        token: String = token,
        headers: [(String, String)],
        at now: Int64 = now,
        certificate: String? = nil
    ) -> MockPolicy.Verdict {
        let all = [("apns-push-type", "alert")] + headers
        let method = Array("POST".utf8)
        let path = Array("/3/device/\(token)".utf8)
        let body = Array(#"{"aps":{"alert":"hi"}}"#.utf8)
        // Every header's bytes in one arena, so the field pointers stay valid through the call.
        var arena: [UInt8] = []
        var ranges: [(Range<Int>, Range<Int>)] = []
        for (name, value) in all {
            let nameStart = arena.count
            arena += Array(name.utf8)
            let valueStart = arena.count
            arena += Array(value.utf8)
            ranges.append((nameStart..<valueStart, valueStart..<arena.count))
        }
        return arena.withUnsafeBytes { bytes in
            var fields = APNSRequestRules.Fields()
            for (name, value) in ranges {
                fields.add(name: UnsafeRawBufferPointer(rebasing: bytes[name]), value: UnsafeRawBufferPointer(rebasing: bytes[value]))
            }
            return method.withUnsafeBytes { method in
                path.withUnsafeBytes { path in
                    body.withUnsafeBufferPointer { body in
                        policy.push(method: method, path: path, fields: fields, body: body, now: now, certificateBundleID: certificate)
                    }
                }
            }
        }
    }

    func refusal(_ verdict: MockPolicy.Verdict) -> String? {
        verdict.refusal.map { "\($0.status) \($0.reason.rawValue)" }
    }

    // MARK: Token trust

    @Test func aValidTokenPassesAndOpensTheConnectionUpOnce() throws {
        var policy = try policy(configuration())
        #expect(policy.limit == 1)
        #expect(policy.probing)
        let verdict = push(&policy, headers: [("authorization", try bearer(issuedAt: Self.now)), ("apns-topic", Self.bundleID)])
        #expect(verdict.refusal == nil)
        #expect(!verdict.newDERSignedToken)
        // A 403 or a 429 proves nothing; an outage answer neither.
        #expect(policy.answered(status: 403, outage: false) == nil)
        #expect(policy.answered(status: 429, outage: false) == nil)
        #expect(policy.answered(status: 503, outage: true) == nil)
        #expect(policy.probing)
        // A 410 is as good as a 200: APNs gives it only after accepting the token.
        #expect(policy.answered(status: 410, outage: false) == 500)
        #expect(policy.limit == 500)
        #expect(!policy.probing)
        #expect(policy.answered(status: 200, outage: false) == nil, "raised once")
    }

    @Test func aRefusedTokenKeepsTheConnectionAtOneStream() throws {
        var policy = try policy(configuration())
        #expect(refusal(push(&policy, headers: [("apns-topic", Self.bundleID)])) == "403 MissingProviderToken")
        #expect(
            refusal(push(&policy, headers: [("authorization", "bearer x.y.z"), ("apns-topic", Self.bundleID)]))
                == "403 InvalidProviderToken"
        )
        #expect(policy.answered(status: 400, outage: false) == nil, "no token was ever accepted")
        #expect(policy.limit == 1)
    }

    @Test func theConnectionsTokenExpiresAfterAnHour() throws {
        var policy = try policy(configuration())
        let bearer = try bearer(issuedAt: Self.now)
        let headers = [("authorization", bearer), ("apns-topic", Self.bundleID)]
        #expect(push(&policy, headers: headers, at: Self.now + 3600).refusal == nil)
        #expect(refusal(push(&policy, headers: headers, at: Self.now + 3601)) == "403 ExpiredProviderToken")
    }

    @Test func aNewTokenWithinTwentyMinutesIsTooManyUpdates() throws {
        var policy = try policy(configuration())
        let first = [("authorization", try bearer(issuedAt: Self.now)), ("apns-topic", Self.bundleID)]
        #expect(push(&policy, headers: first).refusal == nil)
        let early = [("authorization", try bearer(issuedAt: Self.now + 60)), ("apns-topic", Self.bundleID)]
        #expect(refusal(push(&policy, headers: early, at: Self.now + 60)) == "429 TooManyProviderTokenUpdates")
        let later = [("authorization", try bearer(issuedAt: Self.now + 1200)), ("apns-topic", Self.bundleID)]
        #expect(push(&policy, headers: later, at: Self.now + 1200).refusal == nil)
        // The first token is no longer the connection's: it is verified again, and is too old a
        // replacement now.
        #expect(refusal(push(&policy, headers: first, at: Self.now + 1200)) == "429 TooManyProviderTokenUpdates")
    }

    // MARK: Topics and devices

    @Test func tokenTrustNeedsAnAllowedTopic() throws {
        var policy = try policy(configuration { $0.topics = [Self.bundleID] })
        let bearer = try bearer(issuedAt: Self.now)
        #expect(refusal(push(&policy, headers: [("authorization", bearer)])) == "400 MissingTopic")
        #expect(refusal(push(&policy, headers: [("authorization", bearer), ("apns-topic", "com.other.app")])) == "400 TopicDisallowed")
        // An alert to the VoIP topic: the suffix must be the push type's own.
        #expect(
            refusal(push(&policy, headers: [("authorization", bearer), ("apns-topic", Self.bundleID + ".voip")])) == "400 TopicDisallowed"
        )
        #expect(push(&policy, headers: [("authorization", bearer), ("apns-topic", Self.bundleID)]).refusal == nil)
    }

    @Test func certificateTrustTakesTheTopicFromTheCertificate() throws {
        var policy = try policy(configuration(tokenAuth: false) { $0.clientCAFile = "/ca.pem" })
        #expect(policy.limit == 500, "no probing under certificate trust")
        #expect(refusal(push(&policy, headers: [], certificate: nil)) == "403 BadCertificate")
        #expect(push(&policy, headers: [], certificate: Self.bundleID).refusal == nil, "no apns-topic: the certificate's")
        #expect(refusal(push(&policy, headers: [("apns-topic", "com.other.app")], certificate: Self.bundleID)) == "400 BadTopic")
    }

    @Test func anUnregisteredDeviceIsAnswered410WithAStableTimestamp() throws {
        let gone = String(repeating: "cd", count: 32)
        var policy = try policy(configuration(tokenAuth: false) { $0.unregisteredTokens = [gone] })
        let first = push(&policy, token: gone, headers: [])
        #expect(first.refusal?.status == 410)
        #expect(first.refusal?.reason == .unregistered)
        #expect(first.refusal?.timestamp != nil)
        #expect(push(&policy, token: gone, headers: []).refusal == first.refusal)
        #expect(push(&policy, headers: []).refusal == nil)
    }

    @Test func requestRulesComeFirst() throws {
        var policy = try policy(configuration())
        // No token at all, but the expiration is malformed: the request rules answer.
        #expect(refusal(push(&policy, headers: [("apns-expiration", "soon")])) == "400 BadExpirationDate")
    }

    // MARK: Broadcasts and channel management

    @Test func anotherAppsCertificateMayNotActForThisApp() throws {
        var policy = try policy(configuration(tokenAuth: false) { $0.clientCAFile = "/ca.pem" })
        let mine = policy.authorize(bundleID: Self.bundleID, authorization: nil, now: Self.now, certificateBundleID: Self.bundleID)
        #expect(mine.refusal == nil)
        let theirs = policy.authorize(bundleID: "com.other.app", authorization: nil, now: Self.now, certificateBundleID: Self.bundleID)
        #expect(refusal(theirs) == "403 TopicMismatch")
        #expect(
            refusal(policy.authorize(bundleID: Self.bundleID, authorization: nil, now: Self.now, certificateBundleID: nil))
                == "403 BadCertificate"
        )
    }

    @Test func broadcastCredentialsFollowTheTokenRules() throws {
        var policy = try policy(configuration { $0.topics = [Self.bundleID] })
        #expect(
            refusal(policy.authorize(bundleID: Self.bundleID, authorization: nil, now: Self.now, certificateBundleID: nil))
                == "403 MissingProviderToken"
        )
        let bearer = try bearer(issuedAt: Self.now)
        #expect(policy.authorize(bundleID: Self.bundleID, authorization: bearer, now: Self.now, certificateBundleID: nil).refusal == nil)
        #expect(
            refusal(policy.authorize(bundleID: "com.other.app", authorization: bearer, now: Self.now, certificateBundleID: nil))
                == "403 TopicMismatch"
        )
    }
}
