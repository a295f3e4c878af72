import PushlineAPNSCore
import Testing

@testable import PushlineAPNSMock

/// Apple's channel-management API as the mock answers it, driven with no server. Statuses and
/// reasons are written out by hand (Apple's documentation), independently of the worker's tables.
@Suite struct MockChannelAPITests {
    typealias Answer = MockChannelAPI.Answer

    func call(
        _ method: String,
        _ resource: MockChannelAPI.Resource = .channels,
        bundleID: String = "com.example.app",
        headers: [(String, String)] = [],
        body: String = "",
        store: inout MockChannelStore
    ) -> Answer {
        MockChannelAPI.answer(
            method: method,
            bundleID: bundleID,
            resource: resource,
            headers: headers.map { (name: $0.0, value: $0.1) },
            body: Array(body.utf8),
            store: &store
        )
    }

    @Test func pathsRouteToTheirAppAndResource() {
        #expect(MockChannelAPI.route("/1/apps/com.example.app/channels")! == ("com.example.app", .channels))
        #expect(MockChannelAPI.route("/1/apps/com.example.app/all-channels")! == ("com.example.app", .allChannels))
        #expect(MockChannelAPI.route("/1/apps/com.example.app/channel") == nil)
        #expect(MockChannelAPI.route("/1/apps//channels") == nil)
        #expect(MockChannelAPI.route("/1/apps/com.example.app/channels/x") == nil)
        #expect(MockChannelAPI.route("/2/apps/com.example.app/channels") == nil)
    }

    @Test func createReadListDelete() {
        var store = MockChannelStore(maxChannels: 10, seed: 3)
        let created = call("POST", body: #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#, store: &store)
        #expect(created.status == 201)
        guard let id = created.channelID else {
            Issue.record("no apns-channel-id")
            return
        }
        let read = call("GET", headers: [("apns-channel-id", id)], store: &store)
        #expect(read == Answer(status: 200, body: #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#))
        let listed = call("GET", .allChannels, store: &store)
        #expect(listed == Answer(status: 200, body: #"{"channels":["\#(id)"]}"#))
        #expect(call("GET", .allChannels, bundleID: "com.other", store: &store).body == #"{"channels":[]}"#)
        #expect(call("DELETE", headers: [("apns-channel-id", id)], store: &store) == Answer(status: 204))
        #expect(
            call("GET", headers: [("apns-channel-id", id)], store: &store)
                == Answer(status: 400, reason: APNSReason(rawValue: "ChannelNotRegistered"))
        )
        #expect(
            call("DELETE", headers: [("apns-channel-id", id)], store: &store)
                == Answer(status: 400, reason: APNSReason(rawValue: "ChannelNotRegistered"))
        )
    }

    @Test func refusalsCarryApplesReasons() {
        var store = MockChannelStore(maxChannels: 1, seed: 3)
        #expect(call("POST", body: "not json", store: &store) == Answer(status: 400, reason: APNSReason(rawValue: "BadRequestPayload")))
        #expect(
            call("POST", body: #"{"message-storage-policy":2,"push-type":"LiveActivity"}"#, store: &store)
                == Answer(status: 400, reason: APNSReason(rawValue: "BadRequestParams"))
        )
        #expect(
            call("POST", body: #"{"message-storage-policy":1,"push-type":"alert"}"#, store: &store)
                == Answer(status: 400, reason: APNSReason(rawValue: "BadRequestParams"))
        )
        #expect(
            call("POST", body: #"{"push-type":"LiveActivity"}"#, store: &store)
                == Answer(status: 400, reason: APNSReason(rawValue: "BadRequestParams"))
        )
        // Apple's samples also write "Liveactivity".
        #expect(call("POST", body: #"{"message-storage-policy":1,"push-type":"Liveactivity"}"#, store: &store).status == 201)
        #expect(
            call("POST", body: #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#, store: &store)
                == Answer(status: 400, reason: APNSReason(rawValue: "CannotCreateChannelConfig"))
        )
        #expect(call("GET", store: &store) == Answer(status: 400, reason: APNSReason(rawValue: "MissingChannelId")))
        #expect(
            call("DELETE", headers: [("apns-channel-id", "")], store: &store)
                == Answer(status: 400, reason: APNSReason(rawValue: "MissingChannelId"))
        )
        #expect(
            call("GET", headers: [("apns-channel-id", "not base64!")], store: &store)
                == Answer(status: 400, reason: APNSReason(rawValue: "BadChannelId"))
        )
        #expect(
            call("GET", headers: [("apns-channel-id", "AAAAAAAA")], store: &store)
                == Answer(status: 400, reason: APNSReason(rawValue: "ChannelNotRegistered"))
        )
        #expect(call("PUT", store: &store) == Answer(status: 405, reason: APNSReason(rawValue: "MethodNotAllowed")))
        #expect(call("POST", .allChannels, store: &store) == Answer(status: 405, reason: APNSReason(rawValue: "MethodNotAllowed")))
        #expect(
            call("GET", .allChannels, headers: [("apns-request-id", "x")], store: &store)
                == Answer(status: 400, reason: APNSReason(rawValue: "BadMessageId"))
        )
    }

    @Test func aBroadcastNeedsAChannelOfItsAppAndExpirationZeroWithoutStorage() {
        var store = MockChannelStore(maxChannels: 10, seed: 3)
        let none = try? store.create(bundleID: "com.example.app", policy: .noStorage).get()
        let stored = try? store.create(bundleID: "com.example.app", policy: .mostRecentMessage).get()
        guard let none, let stored else {
            Issue.record("no channels")
            return
        }
        func refusal(_ channelID: String, bundleID: String = "com.example.app", expiration: Int64) -> Answer? {
            let broadcast = APNSBroadcastRules.Accepted(
                bundleID: bundleID,
                channelID: channelID,
                expiration: expiration,
                priority: .immediate,
                requestID: nil,
                authorization: nil
            )
            return MockChannelAPI.broadcastRefusal(broadcast, store: store)
        }
        #expect(refusal(none, expiration: 0) == nil)
        #expect(refusal(none, expiration: 1_790_000_000) == Answer(status: 400, reason: APNSReason(rawValue: "BadRequestParams")))
        #expect(refusal(stored, expiration: 1_790_000_000) == nil)
        #expect(
            refusal(stored, bundleID: "com.other", expiration: 0)
                == Answer(status: 400, reason: APNSReason(rawValue: "ChannelNotRegistered"))
        )
        #expect(refusal("AAAAAAAA", expiration: 0) == Answer(status: 400, reason: APNSReason(rawValue: "ChannelNotRegistered")))
    }
}
