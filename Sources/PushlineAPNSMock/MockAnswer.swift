import PushlineAPNSCore

/// The mock's answer to one request: status, reason and 410 timestamp, which API the request was
/// for (that decides the id headers), and what only the channel-management API sends (a created
/// channel's id, a JSON body).
struct MockAnswer {
    /// The three APIs the mock serves on one listener, told apart by path.
    enum API: Sendable, Hashable {
        /// `/3/device/<token>` (and anything else outside the two below: APNs' 404 BadPath).
        case push
        /// `/4/broadcasts/apps/<bundle id>`.
        case broadcast
        /// `/1/apps/<bundle id>/channels` and `…/all-channels`.
        case channels

        /// The API of `path`, from its first three bytes (no `String` on the push path).
        init(path: UnsafeRawBufferPointer) {
            guard path.count >= 3, path[0] == UInt8(ascii: "/"), path[2] == UInt8(ascii: "/") else {
                self = .push
                return
            }
            switch path[1] {
            case UInt8(ascii: "4"): self = .broadcast
            case UInt8(ascii: "1"): self = .channels
            default: self = .push
            }
        }

        init(path: String) {
            var path = path
            self = path.withUTF8 { API(path: UnsafeRawBufferPointer($0)) }
        }
    }

    var api: API
    var status: Int
    var reason: APNSReason?
    var timestamp: Int64?
    /// `apns-channel-id` of a channel just created.
    var channelID: String?
    /// A successful channel read or list.
    var body: String?

    init(
        api: API = .push,
        status: Int,
        reason: APNSReason? = nil,
        timestamp: Int64? = nil,
        channelID: String? = nil,
        body: String? = nil
    ) {
        self.api = api
        self.status = status
        self.reason = reason
        self.timestamp = timestamp
        self.channelID = channelID
        self.body = body
    }

    init(api: API, _ rejection: APNSRequestRules.Rejection) {
        self.init(api: api, status: rejection.status, reason: rejection.reason)
    }
}
