/// The `apns-priority` header.
public enum APNSPriority: Int, Sendable, CaseIterable, Hashable {
    /// 10: deliver immediately.
    case immediate = 10
    /// 5: deliver with the device's power considerations in mind (required for background).
    case powerConsiderate = 5
    /// 1: lowest; prioritise the device's power over all other factors.
    case low = 1

    /// The header value: a constant string per priority, not formatted per request.
    public var headerValue: String {
        switch self {
        case .immediate: "10"
        case .powerConsiderate: "5"
        case .low: "1"
        }
    }
}
