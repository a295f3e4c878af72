/// One notification to one device, or one broadcast to a channel: everything that becomes one
/// APNs request.
///
/// `payload` is the JSON body exactly as the sender wrote it; Pushline never re-serialises it.
public struct APNSNotification: Sendable, Hashable {
    public var destination: APNSDestination
    /// `apns-topic` (not sent with a broadcast, whose app is in its path).
    public var topic: String
    public var pushType: APNSPushType
    public var priority: APNSPriority
    /// `apns-expiration` in unix seconds; nil = header omitted.
    public var expiration: Int64?
    public var collapseID: String?
    /// Canonical lowercase UUID sent as `apns-id` (`apns-request-id` on a broadcast).
    public var apnsID: String
    public var payload: [UInt8]

    public init(
        deviceToken: String,
        topic: String,
        pushType: APNSPushType = .alert,
        priority: APNSPriority? = nil,
        expiration: Int64? = nil,
        collapseID: String? = nil,
        apnsID: String,
        payload: [UInt8]
    ) {
        self.destination = .device(token: deviceToken)
        self.topic = topic
        self.pushType = pushType
        self.priority = priority ?? pushType.defaultPriority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.payload = payload
    }

    /// A broadcast to channel `channelID` of the app `bundleID`: push type `liveactivity`, and an
    /// `apns-expiration` always sent (0 when `expiration` is nil: the only value every channel's
    /// storage policy accepts).
    public static func broadcast(
        channelID: String,
        bundleID: String,
        priority: APNSPriority = .immediate,
        expiration: Int64? = nil,
        requestID: String,
        payload: [UInt8]
    ) -> APNSNotification {
        var notification = APNSNotification(
            deviceToken: "",
            topic: APNSPushType.liveactivity.defaultTopic(bundleID: bundleID),
            pushType: .liveactivity,
            priority: priority,
            expiration: expiration ?? 0,
            apnsID: requestID,
            payload: payload
        )
        notification.destination = .channel(id: channelID, bundleID: bundleID)
        return notification
    }

    /// The device token; "" for a broadcast. Setting it makes the notification a device one.
    public var deviceToken: String {
        get {
            if case .device(let token) = destination { return token }
            return ""
        }
        set { destination = .device(token: newValue) }
    }

    /// The broadcast channel id; nil for a device notification.
    public var channelID: String? {
        if case .channel(let id, _) = destination { return id }
        return nil
    }

    /// `/3/device/<token>`, or `/4/broadcasts/apps/<bundle id>` for a broadcast.
    public var path: String { destination.path }
}
