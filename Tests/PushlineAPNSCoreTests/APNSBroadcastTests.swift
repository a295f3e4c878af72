import Testing

@testable import PushlineAPNSCore

/// Broadcast push (iOS 18 channels): the request the client builds, the rules APNs applies to it,
/// the reasons it answers with, and the channel-management API's requests and answers. Expected
/// values are written out here, not read from the tables under test.
@Suite struct APNSBroadcastTests {
    static let channelID = "dHN0LXNyY2gtY2hubA=="
    static let requestID = "123e4567-e89b-12d3-a456-426655440000"

    static func broadcast(expiration: Int64? = nil, payload: String = #"{"aps":{"event":"update"}}"#) -> APNSNotification {
        .broadcast(
            channelID: channelID,
            bundleID: "com.example.app",
            priority: .powerConsiderate,
            expiration: expiration,
            requestID: requestID,
            payload: Array(payload.utf8)
        )
    }

    static func headers(_ notification: APNSNotification) -> [String: String] {
        let fields = APNSRequestHeaders.make(
            for: notification,
            authority: "api.push.apple.com",
            bearerToken: "jwt",
            firstOnConnection: true
        )
        return Dictionary(fields.map { ($0.name, $0.value) }) { first, _ in first }
    }

    static func rejection(_ notification: APNSNotification, method: String = "POST") -> APNSRequestRules.Rejection? {
        let fields = APNSRequestHeaders.make(for: notification, authority: "h", bearerToken: "jwt", firstOnConnection: false)
        let headers = fields.filter { !$0.name.hasPrefix(":") }.map { (name: $0.name, value: $0.value) }
        return notification.payload.withUnsafeBufferPointer { body in
            switch APNSBroadcastRules.check(method: method, path: notification.path, headers: headers, body: body) {
            case .success: nil
            case .failure(let rejection): rejection
            }
        }
    }

    @Test func aBroadcastIsOnePostToTheAppWithTheChannelAndNoTopic() {
        let headers = Self.headers(Self.broadcast())
        #expect(headers[":path"] == "/4/broadcasts/apps/com.example.app")
        #expect(headers[":method"] == "POST")
        #expect(headers["apns-channel-id"] == Self.channelID)
        #expect(headers["apns-push-type"] == "liveactivity")
        #expect(headers["apns-priority"] == "5")
        #expect(headers["apns-request-id"] == Self.requestID)
        #expect(headers["apns-expiration"] == "0", "no expiration in the job: 0, which every storage policy takes")
        #expect(headers["authorization"] == "bearer jwt")
        #expect(headers["apns-topic"] == nil)
        #expect(headers["apns-id"] == nil)
        #expect(headers["apns-collapse-id"] == nil)
        #expect(Self.headers(Self.broadcast(expiration: 1_790_000_000))["apns-expiration"] == "1790000000")
        #expect(Self.broadcast().channelID == Self.channelID)
        #expect(Self.broadcast().deviceToken == "")
    }

    @Test func whatTheClientBuildsPassesTheBroadcastRules() {
        #expect(Self.rejection(Self.broadcast()) == nil)
        let largest = #"{"a":""# + String(repeating: "x", count: 5120 - 8) + #""}"#
        #expect(Self.rejection(Self.broadcast(payload: largest)) == nil)
        #expect(Self.rejection(Self.broadcast(payload: " " + largest)) == APNSRequestRules.Rejection(413, .payloadTooLarge))
        #expect(Self.rejection(Self.broadcast(), method: "GET") == APNSRequestRules.Rejection(405, .methodNotAllowed))
    }

    @Test func theBroadcastRulesRefuseWhatAPNsRefuses() {
        func check(
            path: String = "/4/broadcasts/apps/com.example.app",
            _ headers: [(String, String)],
            body: String = "{}"
        )
            -> APNSRequestRules.Rejection?
        {
            Array(body.utf8).withUnsafeBufferPointer { bytes in
                switch APNSBroadcastRules.check(method: "POST", path: path, headers: headers.map { (name: $0.0, value: $0.1) }, body: bytes)
                {
                case .success: nil
                case .failure(let rejection): rejection
                }
            }
        }
        let good = [
            ("apns-channel-id", Self.channelID), ("apns-push-type", "liveactivity"), ("apns-expiration", "0"), ("apns-priority", "10"),
        ]
        #expect(check(good) == nil)
        #expect(check(path: "/4/broadcasts/apps/", good) == APNSRequestRules.Rejection(404, .badPath))
        #expect(check(path: "/4/broadcast/apps/com.example.app", good) == APNSRequestRules.Rejection(404, .badPath))
        #expect(check(Array(good.dropFirst())) == APNSRequestRules.Rejection(400, .missingChannelId))
        #expect(check([("apns-channel-id", "not base64!")] + good.dropFirst()) == APNSRequestRules.Rejection(400, .badChannelId))
        #expect(check([("apns-channel-id", "abc")] + good.dropFirst()) == APNSRequestRules.Rejection(400, .badChannelId))
        #expect(check(good.filter { $0.0 != "apns-push-type" }) == APNSRequestRules.Rejection(400, .missingPushType))
        #expect(
            check(good.map { $0.0 == "apns-push-type" ? ($0.0, "alert") : $0 }) == APNSRequestRules.Rejection(400, .invalidPushType)
        )
        #expect(check(good.filter { $0.0 != "apns-expiration" }) == APNSRequestRules.Rejection(400, .badExpirationDate))
        #expect(check(good.map { $0.0 == "apns-expiration" ? ($0.0, "-1") : $0 }) == APNSRequestRules.Rejection(400, .badExpirationDate))
        #expect(check(good.map { $0.0 == "apns-priority" ? ($0.0, "7") : $0 }) == APNSRequestRules.Rejection(400, .badPriority))
        #expect(check(good + [("apns-request-id", "nope")]) == APNSRequestRules.Rejection(400, .badMessageId))
        #expect(check(good + [("apns-priority", "5")]) == APNSRequestRules.Rejection(400, .duplicateHeaders))
        #expect(check(good, body: "") == APNSRequestRules.Rejection(400, .payloadEmpty))
        #expect(check(good, body: "[1]") == APNSRequestRules.Rejection(400, .badRequestPayload))
    }

    @Test func channelIDsAreBase64OfAnyLength() {
        for valid in ["dHN0LXNyY2gtY2hubA==", "AAAA", "ab+/", "YWJjZA=="] {
            #expect(APNSBroadcastRules.isBase64(valid), "\(valid)")
        }
        for invalid in ["", "abc", "ab=c", "a===", "ab-_", "dHN0 LXNy"] {
            #expect(!APNSBroadcastRules.isBase64(invalid), "\(invalid)")
        }
    }

    @Test func broadcastReasonsAreFinalAndAboutTheBroadcastOrTheApp() {
        let expected: [(String, Int, APNSAnswerScope)] = [
            ("FeatureNotEnabled", 400, .systemic),
            ("MissingChannelId", 400, .notification),
            ("BadChannelId", 400, .notification),
            ("ChannelNotRegistered", 400, .notification),
            ("BadRequestParams", 400, .notification),
            ("BadRequestPayload", 400, .notification),
            ("MissingPushType", 400, .notification),
            ("CannotCreateChannelConfig", 400, .notification),
            ("TopicMismatch", 403, .systemic),
        ]
        for (name, status, scope) in expected {
            let reason = APNSReason(rawValue: name)
            #expect(reason.documentedStatus == status, "\(name) is a documented reason")
            #expect(reason.rawValue == name)
            #expect(APNSDisposition(APNSResponse(status: status, reason: reason)) == .permanent, "\(name) is final")
            #expect(APNSAnswerScope.of(status: status, reason: reason) == scope, "\(name)")
        }
    }

    @Test func channelManagementRequests() {
        let create = APNSChannelOperation.create(storagePolicy: .noStorage).request(bundleID: "com.example.app", requestID: Self.requestID)
        #expect(create.method == "POST")
        #expect(create.path == "/1/apps/com.example.app/channels")
        #expect(create.body.map { String(decoding: $0, as: UTF8.self) } == #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#)
        #expect(create.headers.contains { $0.name == "apns-request-id" && $0.value == Self.requestID })

        let get = APNSChannelOperation.get(channelID: Self.channelID).request(bundleID: "com.example.app", requestID: nil)
        #expect(get.method == "GET" && get.path == "/1/apps/com.example.app/channels" && get.body == nil)
        #expect(get.headers.map(\.name) == ["apns-channel-id"])
        #expect(get.headers.first?.value == Self.channelID)

        let delete = APNSChannelOperation.delete(channelID: Self.channelID).request(bundleID: "com.example.app", requestID: nil)
        #expect(delete.method == "DELETE" && delete.path == "/1/apps/com.example.app/channels")
        #expect(delete.headers.first { $0.name == "apns-channel-id" }?.value == Self.channelID)

        let list = APNSChannelOperation.list.request(bundleID: "com.example.app", requestID: nil)
        #expect(list.method == "GET" && list.path == "/1/apps/com.example.app/all-channels" && list.headers.isEmpty)
    }

    @Test func channelManagementAnswers() {
        let created = APNSChannelAnswer(to: .create(storagePolicy: .mostRecentMessage), status: 201, channelIDHeader: "YWJjZA==", body: [])
        #expect(created == .created(channelID: "YWJjZA=="))
        let read = APNSChannelAnswer(
            to: .get(channelID: "YWJjZA=="),
            status: 200,
            channelIDHeader: nil,
            body: Array(#"{"message-storage-policy":0,"push-type":"LiveActivity"}"#.utf8)
        )
        #expect(read == .channel(storagePolicy: .noStorage))
        #expect(APNSChannelAnswer(to: .delete(channelID: "YWJjZA=="), status: 204, channelIDHeader: nil, body: []) == .deleted)
        let listed = APNSChannelAnswer(to: .list, status: 200, channelIDHeader: nil, body: Array(#"{"channels":["YWJjZA==","AAAA"]}"#.utf8))
        #expect(listed == .channels(["YWJjZA==", "AAAA"]))
        #expect(APNSChannelAnswer(to: .list, status: 200, channelIDHeader: nil, body: Array(#"{"channels":[]}"#.utf8)) == .channels([]))
        let refused = APNSChannelAnswer(
            to: .create(storagePolicy: .noStorage),
            status: 400,
            channelIDHeader: nil,
            body: Array(#"{"reason":"CannotCreateChannelConfig"}"#.utf8)
        )
        #expect(refused == .refused(status: 400, reason: .cannotCreateChannelConfig))
        // A 201 without the header is not a channel.
        #expect(
            APNSChannelAnswer(to: .create(storagePolicy: .noStorage), status: 201, channelIDHeader: nil, body: [])
                == .refused(status: 201, reason: nil)
        )
    }

    @Test func storagePolicyZeroTakesOnlyExpirationZero() {
        #expect(APNSChannelStoragePolicy(rawValue: 0)?.allows(expiration: 0) == true)
        #expect(APNSChannelStoragePolicy(rawValue: 0)?.allows(expiration: 1_790_000_000) == false)
        #expect(APNSChannelStoragePolicy(rawValue: 1)?.allows(expiration: 1_790_000_000) == true)
        #expect(APNSChannelStoragePolicy(rawValue: 2) == nil)
    }
}
