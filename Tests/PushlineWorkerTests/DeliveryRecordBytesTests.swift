import PushlineAPNSCore
import Testing

@testable import PushlineWorker

/// The pipeline writes a delivery record's token from the job's token bytes and its `apns-id`
/// from the job's id block (no `String` per token); the record must be byte for byte the one
/// written from the same values as strings.
@Suite struct DeliveryRecordBytesTests {
    static let tokens = APNSDeviceTokens([String(repeating: "ab", count: 32), String(repeating: "0f", count: 32), "00ff"])
    static let ids = APNSIDGenerator().reserve(3)
    static let source = RecordSource(topic: "push.jobs", partition: 2, offset: 41)

    @Test(arguments: [1, 3]) func tokenAndIDBytesWriteWhatTheirStringsWrite(records: Int) {
        // One record: the template writes every field per record; more: its fixed parts once.
        let template = DeliveryRecordTemplate(
            jobID: "job-1",
            app: "default",
            source: Self.source,
            echo: JobEcho(meta: Array(#"{"c":1}"#.utf8)),
            records: records
        )
        for index in 0..<Self.tokens.count {
            let fromBytes = template.encode(
                recipient: .deviceToken(Self.tokens, index: index),
                status: 200,
                reason: nil,
                apnsID: .block(Self.ids, index: index),
                timestamp: nil,
                attempts: 1,
                latencyMilliseconds: 12.5
            )
            let fromStrings = template.encode(
                token: Self.tokens.token(at: index),
                status: 200,
                reason: nil,
                apnsID: Self.ids.id(at: index),
                timestamp: nil,
                attempts: 1,
                latencyMilliseconds: 12.5
            )
            #expect(fromBytes == fromStrings, "token \(index)")
            #expect(String(decoding: fromBytes, as: UTF8.self).contains(#""token":"\#(Self.tokens.token(at: index))""#))
        }
    }

    @Test func bytesCompareEqualToTheTextTheyStandFor() {
        typealias Recipient = ResultRecord.Delivery.Recipient
        #expect(Recipient.deviceToken(Self.tokens, index: 2) == .token("00ff"))
        #expect(Recipient.deviceToken(Self.tokens, index: 2) != .channel("00ff"))
        #expect(Set<Recipient>([.deviceToken(Self.tokens, index: 0), .token(Self.tokens.token(at: 0))]).count == 1)
        #expect(RecordAPNSID.block(Self.ids, index: 1) == .text(Self.ids.id(at: 1)))
        #expect(RecordAPNSID.block(Self.ids, index: 1).length == Self.ids.id(at: 1).utf8.count)
    }
}
