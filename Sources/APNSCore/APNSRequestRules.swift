/// APNs' request rules, as a pure function: what APNs answers to a malformed request.
///
/// The mock server applies these; they are kept here, beside the request builder, so the rules the
/// client follows and the rules the mock enforces are one table. Authentication (JWT or client
/// certificate) is checked by the caller, which knows the credentials.
public enum APNSRequestRules {
    /// A request that passed every rule: what the server needs to answer it.
    public struct Accepted: Sendable, Hashable {
        public var deviceToken: String
        public var topic: String?
        public var pushType: APNSPushType
        public var apnsID: String?
        public var authorization: String?
    }

    /// A rule that failed: APNs' status and reason.
    public struct Rejection: Swift.Error, Sendable, Hashable {
        public var status: Int
        public var reason: APNSReason
        public init(_ status: Int, _ reason: APNSReason) {
            self.status = status
            self.reason = reason
        }
    }

    /// Applies every rule except authentication, in the order APNs evaluates them.
    ///
    /// - Parameters:
    ///   - headers: regular headers (lowercase names), repeats included, pseudo-headers excluded.
    ///   - body: the request body.
    public static func check(
        method: String,
        path: String,
        headers: [(name: String, value: String)],
        body: UnsafeBufferPointer<UInt8>
    ) -> Result<Accepted, Rejection> {
        guard method == "POST" else { return .failure(Rejection(405, .methodNotAllowed)) }
        let prefix = "/3/device/"
        guard path.hasPrefix(prefix) else { return .failure(Rejection(404, .badPath)) }
        let token = String(path.dropFirst(prefix.count))
        if token.isEmpty { return .failure(Rejection(400, .missingDeviceToken)) }
        guard DeviceToken.isValid(token) else { return .failure(Rejection(400, .badDeviceToken)) }

        // One pass over the headers and no hashing: this runs for every request the mock serves.
        var authorization, pushTypeValue, apnsID, expiration, priority, topic, collapseID: String?
        for (name, value) in headers {
            let previous: String?
            switch name {
            case "authorization": (previous, authorization) = (authorization, value)
            case "apns-push-type": (previous, pushTypeValue) = (pushTypeValue, value)
            case "apns-id": (previous, apnsID) = (apnsID, value)
            case "apns-expiration": (previous, expiration) = (expiration, value)
            case "apns-priority": (previous, priority) = (priority, value)
            case "apns-topic": (previous, topic) = (topic, value)
            case "apns-collapse-id": (previous, collapseID) = (collapseID, value)
            default: continue
            }
            if previous != nil { return .failure(Rejection(400, .duplicateHeaders)) }
        }

        var pushType = APNSPushType.alert
        if let raw = pushTypeValue {
            guard let parsed = APNSPushType(rawValue: raw) else {
                return .failure(Rejection(400, .invalidPushType))
            }
            pushType = parsed
        }
        if let raw = priority {
            guard let parsed = Int(raw).flatMap(APNSPriority.init(rawValue:)) else {
                return .failure(Rejection(400, .badPriority))
            }
            if pushType == .background && parsed == .immediate {
                return .failure(Rejection(400, .badPriority))
            }
        }
        if let raw = expiration {
            guard let value = Int64(raw), value >= 0 else {
                return .failure(Rejection(400, .badExpirationDate))
            }
        }
        if let raw = apnsID, !isCanonicalUUID(raw) {
            return .failure(Rejection(400, .badMessageId))
        }
        if let raw = collapseID, raw.utf8.count > 64 {
            return .failure(Rejection(400, .badCollapseId))
        }
        if let topic, topic.isEmpty {
            return .failure(Rejection(400, .badTopic))
        }

        if body.isEmpty { return .failure(Rejection(400, .payloadEmpty)) }
        if body.count > pushType.maxPayloadBytes { return .failure(Rejection(413, .payloadTooLarge)) }
        do {
            let value = try JSONScanner.validate(body)
            if value.kind != .object { return .failure(Rejection(400, .other("BadPayload"))) }
        } catch {
            return .failure(Rejection(400, .other("BadPayload")))
        }

        return .success(
            Accepted(deviceToken: token, topic: topic, pushType: pushType, apnsID: apnsID, authorization: authorization)
        )
    }

    /// Whether `text` is a UUID in 8-4-4-4-12 hex form (APNs asks for lowercase; either case is
    /// accepted, as APNs does).
    public static func isCanonicalUUID(_ text: String) -> Bool {
        let utf8 = Array(text.utf8)
        guard utf8.count == 36 else { return false }
        for (index, byte) in utf8.enumerated() {
            switch index {
            case 8, 13, 18, 23:
                if byte != UInt8(ascii: "-") { return false }
            default:
                if !DeviceToken.isHexDigit(byte) { return false }
            }
        }
        return true
    }
}
