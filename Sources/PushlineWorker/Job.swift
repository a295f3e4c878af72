import PushlineAPNSCore

/// One validated send job: a notification to one or many device tokens, or one broadcast to a
/// channel (`channelID`, iOS 18; then `tokens` is empty and `pushType` is `liveactivity`).
///
/// `payload` holds the job's payload bytes exactly as they appeared in the record.
public struct Job: Sendable, Hashable {
    public var id: String
    /// The device tokens' bytes, as the record gave them (no `String` per token).
    public var deviceTokens: APNSDeviceTokens
    /// The device tokens as strings (made on each read; the pipeline uses `deviceTokens`).
    public var tokens: [String] {
        get { (0..<deviceTokens.count).map { deviceTokens.token(at: $0) } }
        set { deviceTokens = APNSDeviceTokens(newValue) }
    }
    /// The broadcast channel; nil for a job to device tokens.
    public var channelID: String?
    public var app: String
    public var topic: String
    public var pushType: APNSPushType
    public var priority: APNSPriority
    /// `apns-expiration`, unix seconds.
    public var expiration: Int64?
    public var collapseID: String?
    public var payload: [UInt8]
    /// Not sent, nor retried, after this (unix milliseconds).
    public var deadlineMilliseconds: Int64?
    /// The sender's own `meta` object, its bytes exactly as they appeared in the record; copied
    /// into every result record of the job. Nil when the job has none.
    public var meta: [UInt8]?

    public init(
        id: String,
        tokens: [String],
        app: String,
        topic: String,
        pushType: APNSPushType,
        priority: APNSPriority,
        expiration: Int64? = nil,
        collapseID: String? = nil,
        payload: [UInt8],
        deadlineMilliseconds: Int64? = nil,
        channelID: String? = nil,
        meta: [UInt8]? = nil
    ) {
        self.init(
            id: id,
            deviceTokens: APNSDeviceTokens(tokens),
            app: app,
            topic: topic,
            pushType: pushType,
            priority: priority,
            expiration: expiration,
            collapseID: collapseID,
            payload: payload,
            deadlineMilliseconds: deadlineMilliseconds,
            channelID: channelID,
            meta: meta
        )
    }

    public init(
        id: String,
        deviceTokens: APNSDeviceTokens,
        app: String,
        topic: String,
        pushType: APNSPushType,
        priority: APNSPriority,
        expiration: Int64? = nil,
        collapseID: String? = nil,
        payload: [UInt8],
        deadlineMilliseconds: Int64? = nil,
        channelID: String? = nil,
        meta: [UInt8]? = nil
    ) {
        self.id = id
        self.deviceTokens = deviceTokens
        self.channelID = channelID
        self.app = app
        self.topic = topic
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.payload = payload
        self.deadlineMilliseconds = deadlineMilliseconds
        self.meta = meta
    }

    /// What each result of the job is about: its device tokens, or its one channel.
    public var recipients: [String] {
        channelID.map { [$0] } ?? tokens
    }

    /// How many results the job has: one per device token, or one for its channel.
    public var recipientCount: Int {
        channelID == nil ? deviceTokens.count : 1
    }
}
