import Foundation
import PushlineAPNSCore
import Testing

@testable import PushlineWorker

/// A job's `campaign`: a string of 1...128 bytes, refused otherwise, and echoed as
/// `"campaign":"…"` (before `meta`) in every record of the job, `rejected` included when it could
/// be read; a job without one writes exactly the bytes it wrote before.
@Suite struct JobCampaignTests {
    let decoder = JobDecoder(bundleIDs: ["default": "com.example.app"])
    static let token = String(repeating: "ab", count: 32)
    static let source = RecordSource(topic: "push.jobs", partition: 0, offset: 5)

    func decode(_ text: String) -> Result<Job, JobRejection> {
        decoder.decode(Array(text.utf8))
    }

    @Test func aCampaignIsReadWithItsEscapesResolved() throws {
        let job = try decode(#"{"id":"j","campaign":"spring\/2026 \u00e9","token":"\#(Self.token)","payload":{}}"#).get()
        #expect(job.campaign == "spring/2026 é")
        #expect(try decode(#"{"id":"j","token":"\#(Self.token)","payload":{}}"#).get().campaign == nil)
        #expect(try decode(#"{"id":"j","campaign":null,"token":"\#(Self.token)","payload":{}}"#).get().campaign == nil)
        let longest = String(repeating: "é", count: 64)
        #expect(try decode(#"{"id":"j","campaign":"\#(longest)","token":"\#(Self.token)","payload":{}}"#).get().campaign == longest)
    }

    @Test(arguments: [
        (#"7"#, "invalid_field: campaign: not a string"),
        (#"{"id":1}"#, "invalid_field: campaign: not a string"),
        (#""""#, "invalid_field: campaign: length 0, must be 1..128"),
        (#""\#(String(repeating: "c", count: 129))""#, "invalid_field: campaign: length 129, must be 1..128"),
        (#""\#(String(repeating: "é", count: 64))c""#, "invalid_field: campaign: length 129, must be 1..128"),
    ])
    func aCampaignThatIsNotAShortStringRejectsTheJob(campaign: String, error: String) {
        guard
            case .failure(let rejection) = decode(
                #"{"id":"j","meta":{"c":1},"campaign":\#(campaign),"token":"\#(Self.token)","payload":{}}"#
            )
        else {
            Issue.record("campaign \(campaign) was accepted")
            return
        }
        #expect(rejection.description == error)
        #expect(rejection.jobID == "j")
        #expect(rejection.echo.meta == Array(#"{"c":1}"#.utf8))
        #expect(rejection.echo.campaign == nil)
    }

    @Test func aCampaignTwiceIsADuplicate() {
        guard case .failure(let rejection) = decode(#"{"id":"j","campaign":"a","campaign":"b","token":"\#(Self.token)","payload":{}}"#)
        else {
            Issue.record("campaign twice was accepted")
            return
        }
        #expect(rejection.description == "duplicate_field: campaign")
    }

    @Test func aJobRejectedAfterItsCampaignWasReadCarriesIt() throws {
        guard
            case .failure(let rejection) = decode(
                #"{"id":"j","token":"\#(Self.token)","app":"nope","campaign":"spring","meta":{"c":1},"payload":{}}"#
            )
        else {
            Issue.record("an unknown app was accepted")
            return
        }
        #expect(rejection.echo.campaign == "spring")
        let record = ResultRecord.rejected(
            .init(
                jobID: rejection.jobID,
                error: rejection.description,
                source: Self.source,
                echo: rejection.echo
            )
        )
        #expect(
            String(decoding: record.encoded(), as: UTF8.self)
                == #"{"type":"rejected","job_id":"j","error":"unknown_app: 'nope' is not in the configuration's apps","source":{"topic":"push.jobs","partition":0,"offset":5},"campaign":"spring","meta":{"c":1}}"#
        )
    }

    @Test(arguments: [1, 3]) func everyRecordTypeCarriesTheCampaignBeforeTheMeta(records: Int) throws {
        let meta = Array(#"{"v":"B"}"#.utf8)
        let campaign = #"sale "x" é"#
        let withMeta = Array(#","campaign":"sale \"x\" é","meta":{"v":"B"}}"#.utf8)
        let alone = Array(#","campaign":"sale \"x\" é"}"#.utf8)
        for meta in [meta, nil] {
            let suffix = meta == nil ? alone : withMeta
            let template = DeliveryRecordTemplate(
                jobID: "j",
                app: "default",
                source: Self.source,
                echo: JobEcho(campaign: campaign, meta: meta),
                records: records
            )
            var job = Job(id: "j", tokens: [Self.token], app: "default", topic: "t", pushType: .alert, priority: .immediate, payload: [])
            job.meta = meta
            job.campaign = campaign
            var tally = JobTally()
            tally.add(status: 0, reason: "cancelled", attempts: 0, latencyMilliseconds: 0, heldMilliseconds: nil, answeredAt: 1)
            var single = JSONWriter()
            ResultRecord.JobDone.writeOne(
                job: job,
                outcome: APNSOutcome(noResponse: .cancelled, attempts: 0, latencyMilliseconds: 0),
                answeredAt: 1,
                source: Self.source,
                into: &single
            )
            let encoded: [[UInt8]] = [
                template.encode(
                    token: Self.token,
                    status: 0,
                    reason: "cancelled",
                    apnsID: nil,
                    timestamp: nil,
                    attempts: 0,
                    latencyMilliseconds: 0
                ),
                template.encode(
                    job: job,
                    index: 0,
                    apnsID: nil,
                    outcome: APNSOutcome(noResponse: .cancelled, attempts: 0, latencyMilliseconds: 0)
                ),
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
                        echo: JobEcho(campaign: campaign, meta: meta)
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
                        echo: JobEcho(campaign: campaign, meta: meta)
                    )
                ).encoded(),
                ResultRecord.channelGone(
                    .init(
                        channelID: "AAAA",
                        app: "default",
                        reason: "ChannelNotRegistered",
                        jobID: "j",
                        echo: JobEcho(campaign: campaign, meta: meta)
                    )
                ).encoded(),
                ResultRecord.rejected(.init(jobID: "j", error: "x", source: Self.source, echo: JobEcho(campaign: campaign, meta: meta)))
                    .encoded(),
                ResultRecord.jobDone(tally.record(for: job, source: Self.source)).encoded(),
                single.bytes,
            ]
            for bytes in encoded {
                #expect(Array(bytes.suffix(suffix.count)) == suffix, "\(String(decoding: bytes, as: UTF8.self))")
                #expect((try? JSONSerialization.jsonObject(with: Data(bytes))) != nil)
            }
        }
    }

    /// The records of a job without a campaign are byte for byte those of the same job before
    /// campaigns existed (written here without the new parameter at all).
    @Test(arguments: [1, 3]) func aJobWithoutACampaignWritesTheSameBytes(records: Int) {
        let old = DeliveryRecordTemplate(jobID: "j", app: "default", source: Self.source, records: records)
        let new = DeliveryRecordTemplate(jobID: "j", app: "default", source: Self.source, echo: JobEcho(campaign: nil), records: records)
        func encode(_ template: DeliveryRecordTemplate) -> String {
            String(
                decoding: template.encode(
                    token: Self.token,
                    status: 200,
                    reason: nil,
                    apnsID: nil,
                    timestamp: nil,
                    attempts: 1,
                    latencyMilliseconds: 1
                ),
                as: UTF8.self
            )
        }
        #expect(encode(new) == encode(old))
        #expect(
            encode(new)
                == #"{"type":"delivery","job_id":"j","token":"\#(Self.token)","app":"default","status":200,"reason":null,"apns_id":null,"apns_unique_id":null,"timestamp":null,"attempts":1,"latency_ms":1.0,"final":true,"source":{"topic":"push.jobs","partition":0,"offset":5}}"#
        )
    }
}
