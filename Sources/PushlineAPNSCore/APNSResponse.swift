/// What APNs answered to one request: the status, the reason and the 410 timestamp.
public struct APNSResponse: Sendable, Hashable {
    public var status: Int
    /// APNs' reason string (nil on success).
    public var reason: APNSReason?
    /// For 410: since when the token has been invalid, in milliseconds since the epoch.
    public var timestamp: Int64?
    /// The `apns-id` response header.
    public var apnsID: String?
    /// The `apns-unique-id` response header (development environment only).
    public var apnsUniqueID: String?

    public init(
        status: Int,
        reason: APNSReason? = nil,
        timestamp: Int64? = nil,
        apnsID: String? = nil,
        apnsUniqueID: String? = nil
    ) {
        self.status = status
        self.reason = reason
        self.timestamp = timestamp
        self.apnsID = apnsID
        self.apnsUniqueID = apnsUniqueID
    }

    /// Builds a response from the status, the two id headers and the raw body.
    public init(status: Int, apnsID: String?, apnsUniqueID: String?, body: some Collection<UInt8>) {
        let parsed = APNSErrorBody.parse(body)
        self.init(
            status: status,
            reason: parsed.reason.map(APNSReason.init(rawValue:)),
            timestamp: parsed.timestamp,
            apnsID: apnsID,
            apnsUniqueID: apnsUniqueID
        )
    }
}
