/// Where one APNs request goes: one device, or every device subscribed to a broadcast channel.
public enum APNSDestination: Sendable, Hashable {
    /// `POST /3/device/<token>`.
    case device(token: String)
    /// `POST /4/broadcasts/apps/<bundleID>` with `apns-channel-id: <channelID>` (iOS 18 broadcast
    /// push for Live Activities).
    case channel(id: String, bundleID: String)

    /// The request's `:path`.
    public var path: String {
        let (prefix, rest) = pathParts
        return prefix + rest
    }

    /// The `:path` of a device notification, before its token.
    public static let devicePathPrefix = "/3/device/"

    /// `:path` as its fixed prefix and the part of this destination, so a client can write the two
    /// without building the whole string for every request.
    public var pathParts: (prefix: String, rest: String) {
        switch self {
        case .device(let token): (Self.devicePathPrefix, token)
        case .channel(_, let bundleID): (APNSBroadcastRules.pathPrefix, bundleID)
        }
    }
}
