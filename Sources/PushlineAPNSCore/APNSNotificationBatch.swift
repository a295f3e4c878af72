/// Notifications to many devices that share everything but the device token and the `apns-id`
/// (a job's tokens): one payload, one set of header values, the tokens as bytes
/// (`APNSDeviceTokens`) and the ids as a reserved block (`APNSIDBlock`). Notification `i` goes
/// to token `i` with id `i`. Notifications that share the header values but not the payload (a
/// run of single-token jobs alike but for their text) give each one's payload (`payloads`), and
/// those whose collapse ids differ (each job's own, or the one derived from its id) each one's
/// collapse id (`collapseIDs`). A personalised job's tokens each have their own payload, all in
/// one buffer (`payloadBuffer`).
///
/// `APNSClient.send(_:options:completion:)` sends it with no per-notification object or string:
/// requests are addressed as (batch, index), and header blocks are written from these bytes.
public struct APNSNotificationBatch: Sendable {
    public var topic: String
    public var pushType: APNSPushType
    public var priority: APNSPriority
    public var expiration: Int64?
    /// Every notification's `apns-collapse-id` (nil when `collapseIDs` gives each one's).
    public var collapseID: String?
    /// Notification `i`'s `apns-collapse-id` is `collapseIDs[i]` (one per token; nil: none);
    /// nil when they all send `collapseID`. Set with `collapseID` nil.
    public var collapseIDs: [String?]?
    /// Every notification's payload (empty when `payloads` gives each one's).
    public var payload: [UInt8]
    /// Notification `i`'s payload is `payloads[i]` (one per token); nil when they all send
    /// `payload`.
    public var payloads: [[UInt8]]?
    /// Notification `i`'s payload is `payloadBuffer`'s payload `i` (a personalised job's rendered
    /// payloads, one buffer for all); nil otherwise. Set with `payloads` nil and `payload` empty.
    public var payloadBuffer: APNSPayloadBuffer?
    public var tokens: APNSDeviceTokens
    public var ids: APNSIDBlock

    /// - Precondition: `ids.count == tokens.count`.
    public init(
        tokens: APNSDeviceTokens,
        ids: APNSIDBlock,
        topic: String,
        pushType: APNSPushType = .alert,
        priority: APNSPriority? = nil,
        expiration: Int64? = nil,
        collapseID: String? = nil,
        payload: [UInt8]
    ) {
        precondition(ids.count == tokens.count, "\(ids.count) ids for \(tokens.count) tokens")
        self.tokens = tokens
        self.ids = ids
        self.topic = topic
        self.pushType = pushType
        self.priority = priority ?? pushType.defaultPriority
        self.expiration = expiration
        self.collapseID = collapseID
        self.payload = payload
    }

    public var count: Int { tokens.count }

    /// What every notification of the batch shares, as a notification whose device token and
    /// `apns-id` are empty (and whose collapse id is none when `collapseIDs` gives each one's):
    /// the header rules (`APNSRequestHeaders`) read it.
    public var prototype: APNSNotification {
        APNSNotification(
            deviceToken: "",
            topic: topic,
            pushType: pushType,
            priority: priority,
            expiration: expiration,
            collapseID: collapseID,
            apnsID: "",
            payload: []
        )
    }
}
