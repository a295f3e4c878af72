/// One notification to one device: everything that becomes one APNs request.
///
/// `payload` is the JSON body exactly as the sender wrote it; Pushline never re-serialises it.
public struct APNSNotification: Sendable, Hashable {
    public var deviceToken: String
    public var topic: String
    public var pushType: APNSPushType
    public var priority: APNSPriority
    /// `apns-expiration` in unix seconds; nil = header omitted.
    public var expiration: Int64?
    public var collapseID: String?
    /// Canonical lowercase UUID sent as `apns-id`.
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
        self.deviceToken = deviceToken
        self.topic = topic
        self.pushType = pushType
        self.priority = priority ?? pushType.defaultPriority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.payload = payload
    }

    /// `/3/device/<token>`.
    public var path: String { "/3/device/" + deviceToken }
}
