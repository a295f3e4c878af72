/// One request of Apple's channel-management API (`api-manage-broadcast…`), which creates,
/// reads, lists and deletes an app's broadcast channels. A pure value: the client sends what
/// `request(bundleID:requestID:)` builds and reads the answer with `APNSChannelAnswer`.
public enum APNSChannelOperation: Sendable, Hashable {
    /// `POST /1/apps/<bundle id>/channels` with `{"message-storage-policy":N,"push-type":"LiveActivity"}`.
    case create(storagePolicy: APNSChannelStoragePolicy)
    /// `GET /1/apps/<bundle id>/channels` with `apns-channel-id`.
    case get(channelID: String)
    /// `DELETE /1/apps/<bundle id>/channels` with `apns-channel-id` (irreversible).
    case delete(channelID: String)
    /// `GET /1/apps/<bundle id>/all-channels`.
    case list

    /// The path prefix of every channel-management request.
    public static let pathPrefix = "/1/apps/"

    /// The method, path, regular headers and body of the request for `bundleID`.
    public func request(bundleID: String, requestID: String?) -> (method: String, path: String, headers: [APNSHeaderField], body: [UInt8]?)
    {
        let channels = Self.pathPrefix + bundleID + "/channels"
        var headers: [APNSHeaderField] = []
        let method: String
        var path = channels
        var body: [UInt8]?
        switch self {
        case .create(let policy):
            method = "POST"
            body = Array(#"{"message-storage-policy":\#(policy.rawValue),"push-type":"LiveActivity"}"#.utf8)
            headers.append(APNSHeaderField("content-type", "application/json"))
        case .get(let channelID):
            method = "GET"
            headers.append(APNSHeaderField("apns-channel-id", channelID))
        case .delete(let channelID):
            method = "DELETE"
            headers.append(APNSHeaderField("apns-channel-id", channelID))
        case .list:
            method = "GET"
            path = Self.pathPrefix + bundleID + "/all-channels"
        }
        if let requestID { headers.append(APNSHeaderField("apns-request-id", requestID)) }
        return (method, path, headers, body)
    }
}
