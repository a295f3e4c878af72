/// APNs' rules for a broadcast request (`POST /4/broadcasts/apps/<bundle id>`, iOS 18 channels), as
/// a pure function: what APNs answers to a malformed one before it looks the channel up.
///
/// The mock applies these, then its channel store (an unknown channel, the storage policy); the
/// tests check that what `APNSRequestHeaders` builds for a broadcast passes them. Authentication is
/// checked by the caller, which knows the credentials.
public enum APNSBroadcastRules {
    /// The path of a broadcast up to the bundle id.
    public static let pathPrefix = "/4/broadcasts/apps/"
    /// The largest broadcast payload APNs accepts, in bytes (larger: 413 PayloadTooLarge).
    public static let maxPayloadBytes = 5120

    /// A broadcast that passed every rule: what the server needs to answer it.
    public struct Accepted: Sendable, Hashable {
        public var bundleID: String
        public var channelID: String
        public var expiration: Int64
        public var priority: APNSPriority
        /// The request's `apns-request-id`, echoed in the answer (APNs makes one up when absent).
        public var requestID: String?
        public var authorization: String?

        public init(
            bundleID: String,
            channelID: String,
            expiration: Int64,
            priority: APNSPriority,
            requestID: String? = nil,
            authorization: String? = nil
        ) {
            self.bundleID = bundleID
            self.channelID = channelID
            self.expiration = expiration
            self.priority = priority
            self.requestID = requestID
            self.authorization = authorization
        }
    }

    /// The headers a broadcast's rules read.
    static let fields: Set<String> = [
        "authorization", "apns-push-type", "apns-channel-id", "apns-expiration", "apns-priority", "apns-request-id",
    ]

    /// Applies every rule but authentication and the channel's existence, in order.
    ///
    /// - Parameter headers: regular headers (lowercase names), repeats included, pseudo-headers excluded.
    public static func check(
        method: String,
        path: String,
        headers: [(name: String, value: String)],
        body: UnsafeBufferPointer<UInt8>
    ) -> Result<Accepted, APNSRequestRules.Rejection> {
        typealias Rejection = APNSRequestRules.Rejection
        guard method == "POST" else { return .failure(Rejection(405, .methodNotAllowed)) }
        guard let bundleID = bundleID(inPath: path) else { return .failure(Rejection(404, .badPath)) }
        var values: [String: String] = [:]
        for header in headers where fields.contains(header.name) {
            guard values.updateValue(header.value, forKey: header.name) == nil else {
                return .failure(Rejection(400, .duplicateHeaders))
            }
        }
        guard let channelID = values["apns-channel-id"], !channelID.isEmpty else {
            return .failure(Rejection(400, .missingChannelId))
        }
        guard isBase64(channelID) else { return .failure(Rejection(400, .badChannelId)) }
        guard let pushType = values["apns-push-type"] else { return .failure(Rejection(400, .missingPushType)) }
        // Broadcasts carry Live Activity updates only.
        guard pushType == APNSPushType.liveactivity.rawValue else { return .failure(Rejection(400, .invalidPushType)) }
        guard let expirationText = values["apns-expiration"], let expiration = Int64(expirationText), expiration >= 0 else {
            return .failure(Rejection(400, .badExpirationDate))
        }
        guard let priorityText = values["apns-priority"], let priority = Int(priorityText).flatMap(APNSPriority.init(rawValue:)) else {
            return .failure(Rejection(400, .badPriority))
        }
        let requestID = values["apns-request-id"]
        if let requestID, !APNSRequestRules.isCanonicalUUID(requestID) {
            return .failure(Rejection(400, .badMessageId))
        }
        if body.isEmpty { return .failure(Rejection(400, .payloadEmpty)) }
        if body.count > maxPayloadBytes { return .failure(Rejection(413, .payloadTooLarge)) }
        guard let value = try? JSONScanner.validate(body), value.kind == .object else {
            return .failure(Rejection(400, .badRequestPayload))
        }
        return .success(
            Accepted(
                bundleID: bundleID,
                channelID: channelID,
                expiration: expiration,
                priority: priority,
                requestID: requestID,
                authorization: values["authorization"]
            )
        )
    }

    /// The bundle id after "/4/broadcasts/apps/"; nil when the path is not a broadcast's.
    public static func bundleID(inPath path: String) -> String? {
        guard path.hasPrefix(pathPrefix) else { return nil }
        let bundleID = path.dropFirst(pathPrefix.count)
        guard !bundleID.isEmpty, !bundleID.contains("/") else { return nil }
        return String(bundleID)
    }

    /// Whether `text` is base64 (standard alphabet, padded to a multiple of four), as Apple's
    /// channel ids are. Their length is not fixed, so none is assumed.
    public static func isBase64(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count % 4 == 0 else { return false }
        let padding = bytes.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        guard padding <= 2 else { return false }
        return bytes.dropLast(padding).allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "+"), UInt8(ascii: "/"):
                true
            default:
                false
            }
        }
    }
}
