import Foundation
import Testing

@testable import PushlineWorker

/// A job's `meta`: read byte for byte, bounded, refused when it is not one object, and carried
/// into every record the job produces, `rejected` included when the job could be read.
@Suite struct JobMetaTests {
    let decoder = JobDecoder(bundleIDs: ["default": "com.example.app"])
    static let token = String(repeating: "ab", count: 32)
    static let source = RecordSource(topic: "push.jobs", partition: 0, offset: 5)

    func decode(_ text: String) -> Result<Job, JobRejection> {
        decoder.decode(Array(text.utf8))
    }

    /// A `meta` of exactly `bytes` bytes as written.
    static func meta(bytes: Int) -> String {
        let meta = #"{"m":""# + String(repeating: "x", count: bytes - 8) + #""}"#
        precondition(meta.utf8.count == bytes)
        return meta
    }

    @Test func metaIsKeptByteForByte() throws {
        let meta = #"{ "campaign" : "c\/42", "user":7, "n":1.50,"z":1e2,"u":"\u00e9" }"#
        let job = try decode(#"{"id":"j","token":"\#(Self.token)","meta":\#(meta),"payload":{}}"#).get()
        #expect(job.meta == Array(meta.utf8))
        let none = try decode(#"{"id":"j","token":"\#(Self.token)","payload":{}}"#).get()
        #expect(none.meta == nil)
        let null = try decode(#"{"id":"j","token":"\#(Self.token)","meta":null,"payload":{}}"#).get()
        #expect(null.meta == nil)
    }

    @Test func metaUpTo1024BytesIsAcceptedAndLargerIsRefused() throws {
        let fits = try decode(#"{"id":"j","token":"\#(Self.token)","meta":\#(Self.meta(bytes: 1024)),"payload":{}}"#).get()
        #expect(fits.meta?.count == 1024)
        guard case .failure(let rejection) = decode(#"{"id":"j","token":"\#(Self.token)","meta":\#(Self.meta(bytes: 1025)),"payload":{}}"#)
        else {
            Issue.record("a 1025-byte meta was accepted")
            return
        }
        #expect(rejection.description == "invalid_field: meta: 1025 bytes, at most 1024")
        #expect(rejection.jobID == "j")
        #expect(rejection.echo.meta == nil)
    }

    @Test(arguments: [
        (#"[1,2]"#, "invalid_field: meta: not a JSON object"),
        (#""campaign""#, "invalid_field: meta: not a JSON object"),
        (#"7"#, "invalid_field: meta: not a JSON object"),
    ])
    func metaThatIsNotAnObjectIsRefused(meta: String, error: String) {
        guard case .failure(let rejection) = decode(#"{"id":"j","token":"\#(Self.token)","meta":\#(meta),"payload":{}}"#) else {
            Issue.record("meta \(meta) was accepted")
            return
        }
        #expect(rejection.description == error)
    }

    @Test func metaTwiceIsADuplicate() {
        guard case .failure(let rejection) = decode(#"{"id":"j","token":"\#(Self.token)","meta":{},"meta":{"a":1},"payload":{}}"#) else {
            Issue.record("meta twice was accepted")
            return
        }
        #expect(rejection.description == "duplicate_field: meta")
    }

    @Test func aJobRejectedAfterItsMetaWasReadCarriesIt() throws {
        guard case .failure(let rejection) = decode(#"{"id":"j","token":"\#(Self.token)","app":"nope","meta":{"c":1},"payload":{}}"#) else {
            Issue.record("an unknown app was accepted")
            return
        }
        #expect(rejection.code == .unknownApp)
        #expect(rejection.echo.meta == Array(#"{"c":1}"#.utf8))
        let record = ResultRecord.rejected(
            .init(jobID: rejection.jobID, error: rejection.description, source: Self.source, echo: rejection.echo)
        )
        #expect(
            String(decoding: record.encoded(), as: UTF8.self)
                == #"{"type":"rejected","job_id":"j","error":"unknown_app: 'nope' is not in the configuration's apps","source":{"topic":"push.jobs","partition":0,"offset":5},"meta":{"c":1}}"#
        )
    }

    @Test(arguments: [1, 3]) func everyRecordTypeEndsWithTheMetaBytes(records: Int) throws {
        let meta = Array(#"{"campaign":"c\/42","variant":"B"}"#.utf8)
        let suffix = Array(#","meta":{"campaign":"c\/42","variant":"B"}}"#.utf8)
        let template = DeliveryRecordTemplate(jobID: "j", app: "default", source: Self.source, echo: JobEcho(meta: meta), records: records)
        let delivery = template.encode(
            token: Self.token,
            status: 200,
            reason: nil,
            apnsID: nil,
            timestamp: nil,
            attempts: 1,
            latencyMilliseconds: 1
        )
        let encoded: [[UInt8]] = [
            delivery,
            ResultRecord.delivery(
                .init(
                    jobID: "j",
                    recipient: .channel("AAAA"),
                    app: "default",
                    status: 200,
                    reason: nil,
                    apnsID: nil,
                    timestamp: nil,
                    attempts: 1,
                    latencyMilliseconds: 1,
                    source: Self.source,
                    echo: JobEcho(meta: meta)
                )
            ).encoded(),
            ResultRecord.tokenInvalidated(
                .init(
                    token: Self.token,
                    app: "default",
                    topic: "t",
                    reason: "Unregistered",
                    invalidSince: nil,
                    jobID: "j",
                    environment: "custom",
                    echo: JobEcho(meta: meta)
                )
            ).encoded(),
            ResultRecord.channelGone(
                .init(channelID: "AAAA", app: "default", reason: "ChannelNotRegistered", jobID: "j", echo: JobEcho(meta: meta))
            )
            .encoded(),
            ResultRecord.rejected(.init(jobID: "j", error: "x", source: Self.source, echo: JobEcho(meta: meta))).encoded(),
        ]
        for bytes in encoded {
            #expect(Array(bytes.suffix(suffix.count)) == suffix, "\(String(decoding: bytes, as: UTF8.self))")
            #expect((try? JSONSerialization.jsonObject(with: Data(bytes))) != nil)
        }
        // Without meta, the records are as they were.
        let plain = DeliveryRecordTemplate(jobID: "j", app: "default", source: Self.source, records: records)
        let without = plain.encode(
            token: Self.token,
            status: 200,
            reason: nil,
            apnsID: nil,
            timestamp: nil,
            attempts: 1,
            latencyMilliseconds: 1
        )
        #expect(String(decoding: without, as: UTF8.self).hasSuffix(#""source":{"topic":"push.jobs","partition":0,"offset":5}}"#))
    }
}
