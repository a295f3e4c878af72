/// The `apns-priority` header.
public enum APNSPriority: Int, Sendable, CaseIterable, Hashable {
    /// 10: deliver immediately.
    case immediate = 10
    /// 5: deliver with the device's power considerations in mind (required for background).
    case powerConsiderate = 5
    /// 1: lowest; prioritise the device's power over all other factors.
    case low = 1

    /// The header value.
    public var headerValue: String { String(rawValue) }
}
