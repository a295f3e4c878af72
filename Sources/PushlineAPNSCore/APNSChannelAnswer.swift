/// What the channel-management API answered to an `APNSChannelOperation`: the result, or APNs'
/// refusal (status and reason, verbatim).
public enum APNSChannelAnswer: Sendable, Hashable {
    /// 201 to `create`: the new channel's id (base64; its length is not fixed).
    case created(channelID: String)
    /// 200 to `get`: the channel's storage policy.
    case channel(storagePolicy: APNSChannelStoragePolicy)
    /// 204 to `delete`.
    case deleted
    /// 200 to `list`: every channel id of the app.
    case channels([String])
    /// Anything else: the status, and the reason of the body (nil when it has none).
    case refused(status: Int, reason: APNSReason?)

    /// Reads the answer to `operation` from its status, `apns-channel-id` header and body.
    public init(to operation: APNSChannelOperation, status: Int, channelIDHeader: String?, body: [UInt8]) {
        switch (operation, status) {
        case (.create, 201):
            if let channelID = channelIDHeader, !channelID.isEmpty {
                self = .created(channelID: channelID)
                return
            }
        case (.get, 200):
            let policy = JSONScanner.stringAndIntegerFields(body).integers["message-storage-policy"]
            if let policy = policy.flatMap({ APNSChannelStoragePolicy(rawValue: Int($0)) }) {
                self = .channel(storagePolicy: policy)
                return
            }
        case (.delete, 204), (.delete, 200):
            self = .deleted
            return
        case (.list, 200):
            if let channels = Self.channelList(body) {
                self = .channels(channels)
                return
            }
        default:
            break
        }
        let reason = APNSErrorBody.parse(body).reason.map(APNSReason.init(rawValue:))
        self = .refused(status: status, reason: reason)
    }

    /// The strings of `{"channels":[...]}`; nil when the body is not that.
    static func channelList(_ body: [UInt8]) -> [String]? {
        body.withUnsafeBufferPointer { bytes -> [String]? in
            guard let members = try? JSONScanner.members(bytes),
                let list = members.first(where: { $0.key == "channels" })?.value, list.kind == .array,
                let elements = try? JSONScanner.elements(bytes, of: list)
            else { return nil }
            var channels: [String] = []
            for element in elements {
                guard element.kind == .string, let channel = try? JSONScanner.string(bytes, element) else { return nil }
                channels.append(channel)
            }
            return channels
        }
    }
}
