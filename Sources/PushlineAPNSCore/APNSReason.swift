/// A failure reason from APNs' response body (`{"reason": "..."}`).
///
/// APNs adds reasons over time, so the set is open: known reasons are cases, anything else is kept
/// verbatim in `.other` and round-trips through `rawValue` unchanged.
public enum APNSReason: Sendable, Hashable, CustomStringConvertible {
    case badCollapseId
    case badDeviceToken
    case badExpirationDate
    case badMessageId
    case badPriority
    case badTopic
    case deviceTokenNotForTopic
    case duplicateHeaders
    case idleTimeout
    case invalidPushType
    case missingDeviceToken
    case missingTopic
    case payloadEmpty
    case topicDisallowed
    case badCertificate
    case badCertificateEnvironment
    case expiredProviderToken
    case forbidden
    case invalidProviderToken
    case missingProviderToken
    case unrelatedKeyIdInToken
    case badEnvironmentKeyIdInToken
    /// Not in Apple's table, but answered by APNs (seen in 2025; APNSwift knows it too) for a
    /// token signed with a key of the other environment, like `badEnvironmentKeyIdInToken`.
    case badEnvironmentKeyInToken
    case badPath
    case methodNotAllowed
    case unregistered
    case expiredToken
    case payloadTooLarge
    case tooManyProviderTokenUpdates
    case tooManyRequests
    case internalServerError
    case serviceUnavailable
    case shutdown
    // Broadcast push (iOS 18 channels): the broadcast endpoint and the channel-management API.
    case featureNotEnabled
    case missingChannelId
    case badChannelId
    case channelNotRegistered
    case badRequestParams
    case badRequestPayload
    case missingPushType
    case cannotCreateChannelConfig
    case topicMismatch
    /// A reason this version of Pushline does not know, kept verbatim.
    case other(String)

    private static let known: [(APNSReason, String, Int)] = [
        (.badCollapseId, "BadCollapseId", 400),
        (.badDeviceToken, "BadDeviceToken", 400),
        (.badExpirationDate, "BadExpirationDate", 400),
        (.badMessageId, "BadMessageId", 400),
        (.badPriority, "BadPriority", 400),
        (.badTopic, "BadTopic", 400),
        (.deviceTokenNotForTopic, "DeviceTokenNotForTopic", 400),
        (.duplicateHeaders, "DuplicateHeaders", 400),
        (.idleTimeout, "IdleTimeout", 400),
        (.invalidPushType, "InvalidPushType", 400),
        (.missingDeviceToken, "MissingDeviceToken", 400),
        (.missingTopic, "MissingTopic", 400),
        (.payloadEmpty, "PayloadEmpty", 400),
        (.topicDisallowed, "TopicDisallowed", 400),
        (.badCertificate, "BadCertificate", 403),
        (.badCertificateEnvironment, "BadCertificateEnvironment", 403),
        (.expiredProviderToken, "ExpiredProviderToken", 403),
        (.forbidden, "Forbidden", 403),
        (.invalidProviderToken, "InvalidProviderToken", 403),
        (.missingProviderToken, "MissingProviderToken", 403),
        (.unrelatedKeyIdInToken, "UnrelatedKeyIdInToken", 403),
        (.badEnvironmentKeyIdInToken, "BadEnvironmentKeyIdInToken", 403),
        // Seen from APNs, not in Apple's table (`badEnvironmentKeyInToken`).
        (.badEnvironmentKeyInToken, "BadEnvironmentKeyInToken", 403),
        (.badPath, "BadPath", 404),
        (.methodNotAllowed, "MethodNotAllowed", 405),
        (.unregistered, "Unregistered", 410),
        (.expiredToken, "ExpiredToken", 410),
        (.payloadTooLarge, "PayloadTooLarge", 413),
        (.tooManyProviderTokenUpdates, "TooManyProviderTokenUpdates", 429),
        (.tooManyRequests, "TooManyRequests", 429),
        (.internalServerError, "InternalServerError", 500),
        (.serviceUnavailable, "ServiceUnavailable", 503),
        (.shutdown, "Shutdown", 503),
        // Apple's broadcast error table lists no 410: a channel that does not exist is a 400.
        (.featureNotEnabled, "FeatureNotEnabled", 400),
        (.missingChannelId, "MissingChannelId", 400),
        (.badChannelId, "BadChannelId", 400),
        (.channelNotRegistered, "ChannelNotRegistered", 400),
        (.badRequestParams, "BadRequestParams", 400),
        (.badRequestPayload, "BadRequestPayload", 400),
        (.missingPushType, "MissingPushType", 400),
        (.cannotCreateChannelConfig, "CannotCreateChannelConfig", 400),
        (.topicMismatch, "TopicMismatch", 403),
    ]

    private static let byName: [String: APNSReason] = Dictionary(
        uniqueKeysWithValues: known.map { ($0.1, $0.0) }
    )

    /// Every reason APNs documents (and `BadEnvironmentKeyInToken`, which it answers but does not
    /// document), with the status it comes with.
    public static var documented: [(reason: APNSReason, status: Int)] {
        known.map { ($0.0, $0.2) }
    }

    /// The reason for APNs' string; unknown strings become `.other` verbatim.
    public init(rawValue: String) {
        self = Self.byName[rawValue] ?? .other(rawValue)
    }

    /// The string APNs uses for this reason.
    public var rawValue: String {
        if case .other(let raw) = self { return raw }
        return Self.known.first { $0.0 == self }!.1
    }

    /// The HTTP status APNs documents for this reason, or nil for unknown reasons.
    public var documentedStatus: Int? {
        Self.known.first { $0.0 == self }?.2
    }

    public var description: String { rawValue }
}
