import PushlineAPNSCore

/// Apple's channel-management API (`/1/apps/<bundle id>/channels` and `…/all-channels`) and the
/// broadcast's channel checks, over a `MockChannelStore`: pure functions of the request, so tests
/// drive them with no server. Authentication is the caller's, before these.
enum MockChannelAPI {
    /// What the mock answers: status, reason (for the error body), the `apns-channel-id` of a
    /// created channel, and a JSON body of a successful read or list.
    struct Answer: Sendable, Hashable {
        var status: Int
        var reason: APNSReason?
        var channelID: String?
        var body: String?

        init(status: Int, reason: APNSReason? = nil, channelID: String? = nil, body: String? = nil) {
            self.status = status
            self.reason = reason
            self.channelID = channelID
            self.body = body
        }

        init(_ rejection: APNSRequestRules.Rejection) {
            self.init(status: rejection.status, reason: rejection.reason)
        }
    }

    /// The two resources of the API.
    enum Resource: Sendable, Hashable {
        case channels
        case allChannels
    }

    /// The app and resource a channel-management path names; nil for any other path.
    static func route(_ path: String) -> (bundleID: String, resource: Resource)? {
        guard path.hasPrefix(APNSChannelOperation.pathPrefix) else { return nil }
        let parts = path.dropFirst(APNSChannelOperation.pathPrefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty else { return nil }
        switch parts[1] {
        case "channels": return (String(parts[0]), .channels)
        case "all-channels": return (String(parts[0]), .allChannels)
        default: return nil
        }
    }

    /// Answers one channel-management request (`path` already routed to `bundleID`/`resource`).
    static func answer(
        method: String,
        bundleID: String,
        resource: Resource,
        headers: [(name: String, value: String)],
        body: [UInt8],
        store: inout MockChannelStore
    ) -> Answer {
        func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
        if let requestID = header("apns-request-id"), !APNSRequestRules.isCanonicalUUID(requestID) {
            return Answer(status: 400, reason: .badMessageId)
        }
        switch (resource, method) {
        case (.allChannels, "GET"):
            let list = store.channels(bundleID: bundleID).map(JSONString.quoted).joined(separator: ",")
            return Answer(status: 200, body: #"{"channels":[\#(list)]}"#)
        case (.channels, "POST"):
            switch createRequest(body) {
            case .failure(let rejection):
                return Answer(rejection)
            case .success(let policy):
                switch store.create(bundleID: bundleID, policy: policy) {
                case .success(let channelID): return Answer(status: 201, channelID: channelID)
                case .failure(let rejection): return Answer(rejection)
                }
            }
        case (.channels, "GET"), (.channels, "DELETE"):
            guard let channelID = header("apns-channel-id"), !channelID.isEmpty else {
                return Answer(status: 400, reason: .missingChannelId)
            }
            guard APNSBroadcastRules.isBase64(channelID) else { return Answer(status: 400, reason: .badChannelId) }
            guard let policy = store.policy(bundleID: bundleID, channelID: channelID) else {
                return Answer(status: 400, reason: .channelNotRegistered)
            }
            if method == "DELETE" {
                _ = store.delete(bundleID: bundleID, channelID: channelID)
                return Answer(status: 204)
            }
            return Answer(status: 200, body: #"{"message-storage-policy":\#(policy.rawValue),"push-type":"LiveActivity"}"#)
        default:
            return Answer(status: 405, reason: .methodNotAllowed)
        }
    }

    /// The storage policy of a create request's body `{"message-storage-policy":0|1,"push-type":"LiveActivity"}`:
    /// 400 BadRequestPayload when it is not a JSON object, BadRequestParams when a member is
    /// missing or wrong. Apple's own samples spell the push type in more than one case; any is taken.
    static func createRequest(_ body: [UInt8]) -> Result<APNSChannelStoragePolicy, APNSRequestRules.Rejection> {
        let isObject = body.withUnsafeBufferPointer { (try? JSONScanner.validate($0))?.kind == .object }
        guard isObject else { return .failure(.init(400, .badRequestPayload)) }
        let fields = JSONScanner.stringAndIntegerFields(body)
        guard let raw = fields.integers["message-storage-policy"], let policy = APNSChannelStoragePolicy(rawValue: Int(raw)),
            fields.strings["push-type"]?.lowercased() == "liveactivity"
        else {
            return .failure(.init(400, .badRequestParams))
        }
        return .success(policy)
    }

    /// The channel checks of a broadcast that passed `APNSBroadcastRules`: nil when it may be
    /// delivered; 400 ChannelNotRegistered for a channel the app does not have, 400
    /// BadRequestParams for an `apns-expiration` other than 0 on a no-storage channel.
    static func broadcastRefusal(_ broadcast: APNSBroadcastRules.Accepted, store: MockChannelStore) -> Answer? {
        guard let policy = store.policy(bundleID: broadcast.bundleID, channelID: broadcast.channelID) else {
            return Answer(status: 400, reason: .channelNotRegistered)
        }
        guard policy.allows(expiration: broadcast.expiration) else { return Answer(status: 400, reason: .badRequestParams) }
        return nil
    }
}
