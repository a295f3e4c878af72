import Foundation
import Logging
import PushlineKafka
import Testing

@testable import PushlineWorker

/// The control topic's record (`ControlRecord`): what `pushline cancel` writes and every worker
/// reads, strictly; and the change a read record makes (`ControlTopicReader.change`).
@Suite struct ControlRecordTests {
    func bytes(_ text: String) -> ArraySlice<UInt8> { ArraySlice(Array(text.utf8)) }

    @Test func aCampaignCancelIsWrittenAsTheDocumentedJSONUnderItsTargetsKey() throws {
        let record = ControlRecord(
            target: .campaign("spring \"sale\""),
            cancel: .init(reason: "wrong link", atMilliseconds: 1_790_000_000_123)
        )
        #expect(String(decoding: record.key, as: UTF8.self) == "campaign:spring \"sale\"")
        let value = String(decoding: try #require(record.value), as: UTF8.self)
        #expect(value == #"{"type":"cancel","campaign":"spring \"sale\"","reason":"wrong link","at":1790000000123}"#)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(value.utf8)) as? [String: Any])
        #expect(object["campaign"] as? String == "spring \"sale\"", "the name is JSON-escaped, never breaks out")
    }

    @Test func aJobCancelWithoutReasonWritesNullAndReadsBackEqual() throws {
        let record = ControlRecord(target: .job("c42-17"), cancel: .init(reason: nil, atMilliseconds: 5))
        #expect(String(decoding: try #require(record.value), as: UTF8.self) == #"{"type":"cancel","job":"c42-17","reason":null,"at":5}"#)
        let read = try ControlRecord(key: ArraySlice(record.key), value: ArraySlice(try #require(record.value)))
        #expect(read == record)
    }

    @Test func aTombstoneHasNoValueAndReadsAsALift() throws {
        let undo = ControlRecord(target: .campaign("spring"), cancel: nil)
        #expect(undo.value == nil)
        let read = try ControlRecord(key: bytes("campaign:spring"), value: nil)
        #expect(read == undo)
        #expect(try ControlRecord(key: bytes("campaign:spring"), value: []) == undo, "a fetched tombstone has an empty value")
        #expect(read.change(timestampMilliseconds: 0, retentionMilliseconds: 1, nowMilliseconds: 99) == .lift(.campaign("spring")))
    }

    @Test(
        arguments: [
            (nil, #"{"type":"cancel","campaign":"a","reason":null,"at":1}"#),
            ("spring", #"{"type":"cancel","campaign":"a","reason":null,"at":1}"#),
            ("campaign:", ""),
            ("campaign:" + String(repeating: "x", count: 129), ""),
            ("campaign:a", "not json"),
            ("campaign:a", "[1]"),
            ("campaign:a", #"{"type":"uncancel","campaign":"a","reason":null,"at":1}"#),
            ("campaign:a", #"{"type":"cancel","campaign":"b","reason":null,"at":1}"#),
            ("campaign:a", #"{"type":"cancel","job":"a","reason":null,"at":1}"#),
            ("campaign:a", #"{"type":"cancel","campaign":"a","job":"a","reason":null,"at":1}"#),
            ("campaign:a", #"{"type":"cancel","campaign":"a","reason":3,"at":1}"#),
            ("campaign:a", #"{"type":"cancel","campaign":"a","reason":null,"at":1.5}"#),
            ("campaign:a", #"{"type":"cancel","campaign":"a","reason":null,"at":true}"#),
            ("campaign:a", #"{"type":"cancel","campaign":"a","reason":null}"#),
            ("campaign:a", #"{"type":"cancel","campaign":"a","reason":null,"at":1,"extra":0}"#),
        ] as [(String?, String)]
    )
    func aMalformedRecordIsRefusedWithAReason(key: String?, value: String) {
        #expect(throws: ControlRecord.Malformed.self) {
            try ControlRecord(key: key.map { bytes($0) }, value: value.isEmpty ? bytes("x") : bytes(value))
        }
    }

    @Test func aCancelHoldsFromItsRecordTimestampForTheRetentionThenIsIgnored() throws {
        let record = try ControlRecord(key: bytes("job:j1"), value: bytes(#"{"type":"cancel","job":"j1","reason":"typo","at":1}"#))
        #expect(
            record.change(timestampMilliseconds: 1000, retentionMilliseconds: 500, nowMilliseconds: 1499)
                == .cancel(target: .job("j1"), reason: "typo", writtenAtMilliseconds: 1000, expiresAtMilliseconds: 1500)
        )
        #expect(record.change(timestampMilliseconds: 1000, retentionMilliseconds: 500, nowMilliseconds: 1500) == nil)
    }

    @Test func theReaderSkipsAMalformedRecordAndTurnsAGoodOneIntoItsChange() {
        let logger = Logger(label: "test")
        let id = RecordID(topic: "push.jobs.control", partition: 0, offset: 3, generation: 0)
        let bad = KafkaRecord(id: id, key: Array("nonsense".utf8), value: Array("{}".utf8), headers: [], timestampMilliseconds: 10)
        #expect(ControlTopicReader.change(of: bad, retentionMilliseconds: 100, nowMilliseconds: 20, logger: logger) == nil)
        let value = ControlRecord(target: .campaign("c"), cancel: .init(reason: nil, atMilliseconds: 9)).value!
        let good = KafkaRecord(id: id, key: Array("campaign:c".utf8), value: value, headers: [], timestampMilliseconds: 10)
        #expect(
            ControlTopicReader.change(of: good, retentionMilliseconds: 100, nowMilliseconds: 20, logger: logger)
                == .cancel(target: .campaign("c"), reason: nil, writtenAtMilliseconds: 10, expiresAtMilliseconds: 110)
        )
        #expect(ControlTopicReader.change(of: good, retentionMilliseconds: 100, nowMilliseconds: 200, logger: logger) == nil)
        let tombstone = KafkaRecord(id: id, key: Array("campaign:c".utf8), value: [], headers: [], timestampMilliseconds: 30)
        #expect(
            ControlTopicReader.change(of: tombstone, retentionMilliseconds: 100, nowMilliseconds: 40, logger: logger)
                == .lift(.campaign("c"))
        )
    }
}
