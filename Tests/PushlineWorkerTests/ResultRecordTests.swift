import Foundation
import Testing

@testable import PushlineWorker

@Suite struct ResultRecordTests {
    let source = RecordSource(topic: "push.jobs", partition: 3, offset: 1234)

    func object(_ record: ResultRecord) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(record.encoded())) as? [String: Any])
    }

    @Test func deliveryHasEveryContractField() throws {
        let record = ResultRecord.delivery(
            .init(
                jobID: "c42-17",
                recipient: .token("ab"),
                app: "default",
                status: 410,
                reason: "Unregistered",
                apnsID: "123e4567-e89b-12d3-a456-426655440000",
                timestamp: 1_790_000_000_000,
                attempts: 1,
                latencyMilliseconds: 12.44,
                source: source
            )
        )
        let text = String(decoding: record.encoded(), as: UTF8.self)
        #expect(
            text
                == #"{"type":"delivery","job_id":"c42-17","token":"ab","app":"default","status":410,"reason":"Unregistered","apns_id":"123e4567-e89b-12d3-a456-426655440000","apns_unique_id":null,"timestamp":1790000000000,"attempts":1,"latency_ms":12.4,"final":true,"source":{"topic":"push.jobs","partition":3,"offset":1234}}"#
        )
        #expect(record.key == "c42-17")
        let success = try object(
            .delivery(
                .init(
                    jobID: "j",
                    recipient: .token("ab"),
                    app: "a",
                    status: 200,
                    reason: nil,
                    apnsID: nil,
                    timestamp: nil,
                    attempts: 2,
                    latencyMilliseconds: 0.05,
                    source: source
                )
            )
        )
        #expect(success["reason"] is NSNull)
        #expect(success["timestamp"] is NSNull)
        #expect(success["latency_ms"] as? Double == 0.1)
    }

    /// A plain 200 delivery, for tests that set one optional field.
    var success: ResultRecord.Delivery {
        ResultRecord.Delivery(
            jobID: "j",
            recipient: .token("ab"),
            app: "a",
            status: 200,
            reason: nil,
            apnsID: nil,
            timestamp: nil,
            attempts: 1,
            latencyMilliseconds: 1,
            source: source
        )
    }

    @Test func aDeliveryCarriesAPNsUniqueIDWhenAPNsGaveOne() throws {
        var delivery = success
        #expect(try object(.delivery(delivery))["apns_unique_id"] is NSNull)
        delivery.apnsUniqueID = "a6b0b0c4-2c4b-4b1e-9c36-3b2d1f1f0e6a"
        #expect(try object(.delivery(delivery))["apns_unique_id"] as? String == "a6b0b0c4-2c4b-4b1e-9c36-3b2d1f1f0e6a")
    }

    @Test func aHeldDeliveryCarriesHeldMilliseconds() throws {
        var delivery = success
        #expect(try object(.delivery(delivery))["held_ms"] == nil)
        delivery.heldMilliseconds = 1234.56
        #expect(try object(.delivery(delivery))["held_ms"] as? Double == 1234.6)
    }

    /// A record is written straight into its array when the estimate holds; strings full of
    /// escapes overflow it, and the writer must move to its own buffer without losing a byte.
    @Test func recordsLongerThanTheirEstimateAreWholeAndValid() throws {
        for repeats in [0, 1, 40, 400] {
            let reason = String(repeating: "\"\n\u{01}é", count: repeats)
            let record = ResultRecord.delivery(
                .init(
                    jobID: "j\u{7}",
                    recipient: .token("ab"),
                    app: "default",
                    status: 0,
                    reason: reason,
                    apnsID: reason,
                    timestamp: Int64.max,
                    attempts: Int.max,
                    latencyMilliseconds: 1e15,
                    source: source
                )
            )
            let decoded = try object(record)
            #expect(decoded["reason"] as? String == reason, "\(repeats)")
            #expect(decoded["apns_id"] as? String == reason, "\(repeats)")
            #expect(decoded["job_id"] as? String == "j\u{7}")
            #expect((decoded["timestamp"] as? NSNumber)?.int64Value == Int64.max)
            #expect((decoded["source"] as? [String: Any])?["offset"] as? Int == 1234)
        }
    }

    @Test func invalidationAndRejectionShapes() throws {
        let invalidated = ResultRecord.tokenInvalidated(
            .init(
                token: "ab",
                app: "default",
                topic: "com.example.app",
                reason: "Unregistered",
                invalidSince: 1_790_000_000_000,
                jobID: "c42-17",
                environment: "production"
            )
        )
        let object = try object(invalidated)
        #expect(object["environment"] as? String == "production")
        #expect(object["type"] as? String == "token_invalidated")
        #expect(object["invalid_since"] as? Int == 1_790_000_000_000)
        #expect(object["topic"] as? String == "com.example.app")
        #expect(invalidated.key == "ab")

        let rejected = ResultRecord.rejected(.init(jobID: nil, error: "invalid_json: \"quote\"\n\u{01}", source: source))
        let parsed = try self.object(rejected)
        #expect(parsed["job_id"] is NSNull)
        #expect(parsed["error"] as? String == "invalid_json: \"quote\"\n\u{01}")
        #expect((parsed["source"] as? [String: Any])?["offset"] as? Int == 1234)
    }
}
