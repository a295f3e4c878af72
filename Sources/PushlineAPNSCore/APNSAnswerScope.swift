/// Whom an APNs refusal is about: the one notification, or everything the sender sends.
///
/// A token-level answer is final for that notification (a dead token, a bad payload). A systemic
/// answer is about the key, the certificate, the topic, the environment or APNs itself: every
/// other notification of the app would get the same answer, so finalizing would burn the whole
/// campaign. The pool judges systemic answers by their rate per app (see `AppHealth` in APNS and
/// docs/apns.md, "Systemic faults"): a storm holds the app; a lone one is retried or finalized.
public enum APNSAnswerScope: Sendable, Hashable {
    /// About this notification only (also every success).
    case notification
    /// About the app's credentials, topic or environment, or about APNs.
    case systemic

    /// The scope of an answer with this status and reason.
    public static func of(status: Int, reason: APNSReason?) -> APNSAnswerScope {
        if let reason, let scope = table[reason] { return scope }
        switch status {
        // An unknown 403 is about authentication; an unknown 5xx is APNs' trouble.
        case 403, 500...599: return .systemic
        default: return .notification
        }
    }

    /// The scope of a response.
    public static func of(_ response: APNSResponse) -> APNSAnswerScope {
        of(status: response.status, reason: response.reason)
    }

    /// Every documented reason and its scope (docs/apns.md prints the same table).
    public static let table: [APNSReason: APNSAnswerScope] = [
        // 400: about the notification or its token...
        .badCollapseId: .notification,
        .badDeviceToken: .notification,
        .badExpirationDate: .notification,
        .badMessageId: .notification,
        .badPriority: .notification,
        .deviceTokenNotForTopic: .notification,
        .duplicateHeaders: .notification,
        .invalidPushType: .notification,
        .missingDeviceToken: .notification,
        .payloadEmpty: .notification,
        // ...or about the app's topic, or the connection.
        .badTopic: .systemic,
        .topicDisallowed: .systemic,
        .missingTopic: .systemic,
        .idleTimeout: .systemic,
        // 403: the credential.
        .badCertificate: .systemic,
        .badCertificateEnvironment: .systemic,
        .expiredProviderToken: .systemic,
        .forbidden: .systemic,
        .invalidProviderToken: .systemic,
        .missingProviderToken: .systemic,
        .unrelatedKeyIdInToken: .systemic,
        .badEnvironmentKeyIdInToken: .systemic,
        .badEnvironmentKeyInToken: .systemic,
        // 404, 405: the request line is wrong for every notification.
        .badPath: .systemic,
        .methodNotAllowed: .systemic,
        // 410, 413: the token, the payload.
        .unregistered: .notification,
        .expiredToken: .notification,
        .payloadTooLarge: .notification,
        // 429: one device too often is about that device; token updates are about the key.
        .tooManyRequests: .notification,
        .tooManyProviderTokenUpdates: .systemic,
        // 5xx: APNs.
        .internalServerError: .systemic,
        .serviceUnavailable: .systemic,
        .shutdown: .systemic,
        // Broadcasts: a channel or a request that is wrong is about that one broadcast...
        .missingChannelId: .notification,
        .badChannelId: .notification,
        .channelNotRegistered: .notification,
        .badRequestParams: .notification,
        .badRequestPayload: .notification,
        .missingPushType: .notification,
        .cannotCreateChannelConfig: .notification,
        // ...while broadcast not enabled for the app, or a key not for its topic, is about every one.
        .featureNotEnabled: .systemic,
        .topicMismatch: .systemic,
    ]
}
