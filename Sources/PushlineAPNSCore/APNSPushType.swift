/// The `apns-push-type` header: what kind of notification a request carries.
///
/// Pushline always sends it (APNs requires it on watchOS and iOS 13+). The push type decides the
/// default topic suffix, the default priority and the payload size limit.
public enum APNSPushType: String, Sendable, CaseIterable, Hashable {
    case alert
    case background
    case voip
    case complication
    case fileprovider
    case mdm
    case location
    case liveactivity
    case pushtotalk
    case widgets
    case controls

    /// What APNs expects after the bundle id in `apns-topic` for this push type (an `mdm` push's
    /// topic is the one in the MDM certificate; Pushline has no default for it).
    public var topicSuffix: String {
        switch self {
        case .voip: return ".voip"
        case .complication: return ".complication"
        case .fileprovider: return ".pushkit.fileprovider"
        case .liveactivity: return ".push-type.liveactivity"
        case .pushtotalk: return ".voip-ptt"
        case .location: return ".location-query"
        case .widgets: return ".push-type.widgets"
        case .controls: return ".push-type.controls"
        case .alert, .background, .mdm: return ""
        }
    }

    /// Whether APNs takes `priority` with this push type: a background push must not be sent at
    /// priority 10 (APNs answers 400 BadPriority).
    public func allows(_ priority: APNSPriority) -> Bool {
        !(self == .background && priority == .immediate)
    }

    /// The largest payload APNs accepts for this push type, in bytes.
    public var maxPayloadBytes: Int {
        self == .voip ? 5120 : 4096
    }

    /// The priority used when a job names none: 5 for background (APNs requires it), else 10.
    public var defaultPriority: APNSPriority {
        self == .background ? .powerConsiderate : .immediate
    }

    /// The topic for `bundleID` with this push type's suffix.
    public func defaultTopic(bundleID: String) -> String {
        // Most push types have no suffix: the bundle id as it is, without a concatenation.
        let suffix = topicSuffix
        return suffix.isEmpty ? bundleID : bundleID + suffix
    }
}
