import PushlineAPNSCore
import PushlineHTTP2Server

/// Which requests the timed outage covers (`--outage-topic`, `--outage-key-id`), as a value each
/// connection keeps: all of them without a scope; else those of one app (its topic, and topics
/// that start with it and a dot) and/or of one signing key (the provider token's `kid`). A
/// request the outage does not cover is answered as if there were no outage, and is not counted
/// toward its start.
///
/// The app of a push is its `apns-topic` header (under certificate trust, without one, the client
/// certificate's bundle id); of a broadcast or a channel-management request, the bundle id in its
/// path. The token is not verified here (the outage answers before every rule): a `kid` is read
/// from the JWT's header, once per token, since a connection sends the same one for 20 minutes
/// or more.
struct MockOutageScope {
    /// The topic covered, as bytes; nil = every topic.
    let topic: [UInt8]?
    /// The `kid` covered; nil = every key.
    let keyID: String?
    /// The authorization header seen last, and whether its token's `kid` is `keyID`.
    private var lastAuthorization: [UInt8]?
    private var lastAuthorizationCovered = false

    init(topic: String?, keyID: String?) {
        self.topic = topic.map { Array($0.utf8) }
        self.keyID = keyID
    }

    init(_ configuration: MockConfiguration) {
        self.init(topic: configuration.outageTopic, keyID: configuration.outageKeyID)
    }

    /// No scope: the outage covers every request, and nothing needs to be read from them.
    var coversEverything: Bool { topic == nil && keyID == nil }

    /// Whether the outage covers the request with these fields (pseudo-headers included);
    /// `certificateBundleID` is read only for a push without `apns-topic` (nil when the connection
    /// has no client certificate).
    mutating func covers(_ fields: UnsafeHTTP2HeaderFields, certificateBundleID: @autoclosure () -> String?) -> Bool {
        var path = UnsafeRawBufferPointer(start: nil, count: 0)
        var topicField: UnsafeRawBufferPointer?
        var authorization: UnsafeRawBufferPointer?
        fields.forEach { name, value, _ in
            if name.elementsEqual(":path".utf8) {
                path = value
            } else if name.elementsEqual("apns-topic".utf8) {
                topicField = value
            } else if name.elementsEqual("authorization".utf8) {
                authorization = value
            }
        }
        guard topic != nil else { return covers(topic: nil, authorization: authorization) }
        let app: String?
        switch MockAnswer.API(path: path) {
        case .push:
            if let topicField { return covers(topic: topicField, authorization: authorization) }
            app = certificateBundleID()
        case .broadcast:
            app = APNSBroadcastRules.bundleID(inPath: String(decoding: path, as: UTF8.self))
        case .channels:
            app = MockChannelAPI.route(String(decoding: path, as: UTF8.self))?.bundleID
        }
        guard var app else { return covers(topic: nil, authorization: authorization) }
        return app.withUTF8 { covers(topic: UnsafeRawBufferPointer($0), authorization: authorization) }
    }

    /// Whether the outage covers a request for `requestTopic` (nil: it names none) that carries
    /// `authorization` (the header's value; nil when absent).
    mutating func covers(topic requestTopic: UnsafeRawBufferPointer?, authorization: UnsafeRawBufferPointer?) -> Bool {
        if let topic {
            guard let requestTopic, Self.topic(requestTopic, isWithin: topic) else { return false }
        }
        if keyID != nil {
            guard let authorization, keyIDCovered(authorization) else { return false }
        }
        return true
    }

    /// Whether `candidate` is `topic` or starts with `topic` and a dot (`….voip`,
    /// `….push-type.liveactivity`).
    static func topic(_ candidate: UnsafeRawBufferPointer, isWithin topic: [UInt8]) -> Bool {
        guard candidate.count >= topic.count, candidate.prefix(topic.count).elementsEqual(topic) else { return false }
        return candidate.count == topic.count || candidate[topic.count] == UInt8(ascii: ".")
    }

    private mutating func keyIDCovered(_ authorization: UnsafeRawBufferPointer) -> Bool {
        if let lastAuthorization, lastAuthorization.elementsEqual(authorization) { return lastAuthorizationCovered }
        let covered = Self.keyID(ofAuthorization: authorization) == keyID
        lastAuthorization = Array(authorization)
        lastAuthorizationCovered = covered
        return covered
    }

    /// The `kid` of the provider token in an authorization header's value (`bearer <JWT>`, the
    /// scheme in any case); nil when it holds no well-formed provider token.
    static func keyID(ofAuthorization value: UnsafeRawBufferPointer) -> String? {
        let scheme = "bearer "
        let text = String(decoding: value, as: UTF8.self)
        guard text.utf8.count > scheme.utf8.count, text.prefix(scheme.count).lowercased() == scheme else { return nil }
        return ProviderToken.parse(text.dropFirst(scheme.count))?.keyID
    }
}
