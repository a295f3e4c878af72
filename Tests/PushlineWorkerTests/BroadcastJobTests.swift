import Foundation
import PushlineAPNSCore
import Testing

@testable import PushlineWorker

/// Broadcast jobs (`channel_id` instead of tokens): how they decode, what they send, and the
/// records they yield. Expected values are written out here.
@Suite struct BroadcastJobTests {
    let decoder = JobDecoder(bundleIDs: ["default": "com.example.app", "news": "com.example.news"])
    let channel = "dHN0LXNyY2gtY2hubA=="
    let source = RecordSource(topic: "push.jobs", partition: 1, offset: 88)

    func decode(_ text: String) -> Result<Job, JobRejection> {
        decoder.decode(Array(text.utf8))
    }

    func rejection(_ text: String) -> JobRejection? {
        if case .failure(let rejection) = decode(text) { return rejection }
        return nil
    }

    @Test func aChannelJobIsOneLiveActivityBroadcast() throws {
        let job = try decode(#"{"id":"la-9","channel_id":"\#(channel)","payload":{"aps":{"event":"update"}}}"#).get()
        #expect(job.channelID == channel)
        #expect(job.tokens.isEmpty)
        #expect(job.recipients == [channel])
        #expect(job.pushType == .liveactivity)
        #expect(job.priority == .immediate)
        #expect(job.expiration == nil)

        let full = try decode(
            #"{"id":"la-10","channel_id":"AAAA","app":"news","push_type":"liveactivity","priority":1,"expiration":1790000000,"payload":{}}"#
        ).get()
        #expect(full.priority == .low && full.expiration == 1_790_000_000 && full.app == "news")

        let notifications = full.broadcastNotifications(bundleID: "com.example.news", ids: APNSIDGenerator(seed: 1))
        #expect(notifications.count == 1)
        let sent = try #require(notifications.first)
        #expect(sent.path == "/4/broadcasts/apps/com.example.news")
        #expect(sent.channelID == "AAAA")
        #expect(sent.priority == .low && sent.expiration == 1_790_000_000 && sent.pushType == .liveactivity)
        #expect(APNSRequestRules.isCanonicalUUID(sent.apnsID))
    }

    @Test func aJobGoesToTokensOrToAChannelNeverBoth() {
        let token = String(repeating: "ab", count: 32)
        let both = rejection(#"{"id":"x","channel_id":"\#(channel)","token":"\#(token)","payload":{}}"#)
        #expect(both?.code == .invalidField && both?.detail.hasPrefix("channel_id and token/tokens") == true, "\(String(describing: both))")
        #expect(rejection(#"{"id":"x","channel_id":"\#(channel)","tokens":["\#(token)"],"payload":{}}"#)?.code == .invalidField)
        let neither = rejection(#"{"id":"x","payload":{}}"#)
        #expect(neither == JobRejection(.missingField, "token, tokens or channel_id", jobID: "x"))
        // Null members are absent.
        #expect((try? decode(#"{"id":"x","channel_id":"\#(channel)","token":null,"payload":{}}"#).get()) != nil)
        #expect((try? decode(#"{"id":"x","channel_id":null,"token":"\#(token)","payload":{}}"#).get())?.channelID == nil)
    }

    @Test func whatABroadcastCannotCarryIsRefused() {
        #expect(rejection(#"{"id":"x","channel_id":"","payload":{}}"#)?.detail == "channel_id: empty")
        #expect(rejection(#"{"id":"x","channel_id":7,"payload":{}}"#)?.detail == "channel_id: not a string")
        #expect(rejection(#"{"id":"x","channel_id":"a b","payload":{}}"#)?.code == .invalidField)
        #expect(rejection(#"{"id":"x","channel_id":"a\nb","payload":{}}"#)?.code == .invalidField)
        #expect(
            rejection(#"{"id":"x","channel_id":"\#(channel)","push_type":"alert","payload":{}}"#)?.detail
                == "push_type: 'alert' cannot be broadcast; a channel_id job is liveactivity"
        )
        #expect(
            rejection(#"{"id":"x","channel_id":"\#(channel)","topic":"com.example.app","payload":{}}"#)?.detail.hasPrefix("topic:") == true
        )
        #expect(
            rejection(#"{"id":"x","channel_id":"\#(channel)","collapse_id":"c","payload":{}}"#)?.detail
                == "collapse_id: a broadcast has none"
        )
        #expect(rejection(#"{"id":"x","channel_id":"\#(channel)","app":"other","payload":{}}"#)?.code == .unknownApp)
        #expect(rejection(#"{"id":"x","channel_id":"\#(channel)","priority":7,"payload":{}}"#)?.code == .invalidField)
    }

    @Test func aBroadcastPayloadMayHave5120Bytes() {
        func job(_ bytes: Int) -> String {
            let payload = #"{"a":""# + String(repeating: "x", count: bytes - 8) + #""}"#
            return #"{"id":"x","channel_id":"\#(channel)","payload":\#(payload)}"#
        }
        #expect((try? decode(job(5120)).get()) != nil)
        #expect(rejection(job(5121)) == JobRejection(.payloadTooLarge, "payload is 5121 bytes, limit 5120 for a broadcast", jobID: "x"))
    }

    @Test func aBroadcastDeliveryNamesItsChannelInPlaceOfAToken() throws {
        let delivery = ResultRecord.delivery(
            .init(
                jobID: "la-9",
                recipient: .channel(channel),
                app: "default",
                status: 200,
                reason: nil,
                apnsID: "0a1b2c3d-0000-4000-8000-123456789abc",
                apnsUniqueID: "5f0e9c2a-1b7d-4d6e-8a31-2c4f6b8d9e10",
                timestamp: nil,
                attempts: 1,
                latencyMilliseconds: 8.14,
                source: source
            )
        )
        #expect(
            String(decoding: delivery.encoded(), as: UTF8.self)
                == #"{"type":"delivery","job_id":"la-9","channel_id":"dHN0LXNyY2gtY2hubA==","app":"default","status":200,"reason":null,"apns_id":"0a1b2c3d-0000-4000-8000-123456789abc","apns_unique_id":"5f0e9c2a-1b7d-4d6e-8a31-2c4f6b8d9e10","timestamp":null,"attempts":1,"latency_ms":8.1,"final":true,"source":{"topic":"push.jobs","partition":1,"offset":88}}"#
        )
        #expect(delivery.key == "la-9")
        // The pipeline's template writes the same bytes.
        let template = DeliveryRecordTemplate(jobID: "la-9", app: "default", source: source, broadcast: true)
        let fromTemplate = template.encode(
            token: channel,
            status: 200,
            reason: nil,
            apnsID: "0a1b2c3d-0000-4000-8000-123456789abc",
            apnsUniqueID: "5f0e9c2a-1b7d-4d6e-8a31-2c4f6b8d9e10",
            timestamp: nil,
            attempts: 1,
            latencyMilliseconds: 8.14
        )
        #expect(fromTemplate == delivery.encoded())
    }

    @Test func channelGoneIsKeyedByTheChannel() {
        let gone = ResultRecord.channelGone(.init(channelID: channel, app: "default", reason: "ChannelNotRegistered", jobID: "la-9"))
        #expect(
            String(decoding: gone.encoded(), as: UTF8.self)
                == #"{"type":"channel_gone","channel_id":"dHN0LXNyY2gtY2hubA==","app":"default","reason":"ChannelNotRegistered","job_id":"la-9"}"#
        )
        #expect(gone.key == channel)
    }
}
