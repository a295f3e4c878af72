import PushlineAPNSCore
import PushlineKafka
import Testing

@testable import PushlineWorker

/// Cancelled work in the pipeline: a job that arrives cancelled ends every token `0 cancelled`
/// without a request, counted in its `job_done` and released once its records are in Kafka; a
/// cancel ends the work the pools still hold; a job checked just before a cancel and handed over
/// just after is caught all the same.
@Suite struct CancelPipelineTests {
    static let results = "push.results"

    static func job(_ id: String, tokens: [String], campaign: String?) -> String {
        let list = tokens.map { "\"\($0)\"" }.joined(separator: ",")
        let field = campaign.map { #","campaign":"\#($0)""# } ?? ""
        return #"{"id":"\#(id)"\#(field),"tokens":[\#(list)],"payload":{"aps":{"alert":"hi"}}}"#
    }

    static func cancel(_ target: CancelTarget) -> CancelChange {
        .cancel(target: target, reason: "typo", writtenAtMilliseconds: 1, expiresAtMilliseconds: .max)
    }

    static func values(_ harness: PipelineHarness, key: String) -> [String] {
        harness.produced(on: results).filter { $0.key == key }.map(\.value)
    }

    @Test(arguments: ResultsMode.allCases) func aJobOfACancelledCampaignEndsEveryTokenCancelledWithoutARequest(mode: ResultsMode) throws {
        let harness = try PipelineHarness(results: mode)
        harness.pipeline.cancellations.apply(Self.cancel(.campaign("spring")))
        let tokens = (1...3).map(PipelineHarness.token)
        harness.handle([PipelineHarness.record(Self.job("j1", tokens: tokens, campaign: "spring"), offset: 7)])
        #expect(harness.sender.unanswered == 0, "nothing is sent")

        let values = Self.values(harness, key: "j1")
        #expect(values.count == 4)
        let deliveries = values.filter { $0.hasPrefix(#"{"type":"delivery""#) }
        #expect(deliveries.count == 3)
        #expect(deliveries.allSatisfy { $0.contains(#""status":0,"reason":"cancelled","apns_id":null"#) })
        #expect(deliveries.allSatisfy { $0.contains(#""attempts":0"#) && $0.hasSuffix(#","campaign":"spring"}"#) })
        let done = try #require(values.last)
        #expect(done.hasPrefix(#"{"type":"job_done","job_id":"j1","app":"default","tokens":3,"counts":{"0 cancelled":3},"attempts":0,"#))
        #expect(done.hasSuffix(#","campaign":"spring"}"#))
        #expect(done.contains(#""first_sent":null"#))

        // At-least-once: released once every record is in Kafka.
        harness.producer.acknowledge(3)
        #expect(harness.released.completed.isEmpty)
        harness.producer.acknowledge()
        #expect(harness.released.completedOffsets == [7])
        #expect(harness.gate.jobs.value == 0 && harness.gate.count == 0)
    }

    /// In a run of single-token jobs (a group), the one cancelled by its id ends cancelled on its
    /// own; the others go out; every record is released.
    @Test func aCancelledJobInAGroupOfSingleTokenJobsEndsAloneAndTheOthersGoOut() throws {
        let harness = try PipelineHarness()
        harness.pipeline.cancellations.apply(Self.cancel(.job("s2")))
        let records = (0..<4).map {
            PipelineHarness.record(Self.job("s\($0)", tokens: [PipelineHarness.token($0)], campaign: nil), offset: Int64(20 + $0))
        }
        harness.handle(records)
        #expect(harness.sender.unanswered == 3)
        harness.sender.answerAll { _ in .answer(200) }
        for index in [0, 1, 3] {
            let mine = Self.values(harness, key: "s\(index)")
            #expect(mine.count == 2 && mine[0].contains(#""status":200"#) && mine[1].contains(#""counts":{"200":1}"#))
            #expect(!mine[0].contains("campaign"), "a plain job's records are as before")
        }
        let cancelled = Self.values(harness, key: "s2")
        #expect(cancelled.count == 2)
        #expect(cancelled[0].contains(#""status":0,"reason":"cancelled""#))
        #expect(cancelled[1].contains(#""counts":{"0 cancelled":1}"#))
        harness.producer.acknowledge()
        #expect(harness.released.completedOffsets.sorted() == [20, 21, 22, 23])
        #expect(harness.gate.jobs.value == 0 && harness.gate.count == 0)
    }

    /// Work handed to the pools before the cancel (a job of many tokens and members of a group)
    /// ends cancelled when the cancel comes; other work is untouched; a lift lets new jobs go.
    @Test func aCancelEndsTheCampaignsWorkThePoolsHold() throws {
        let harness = try PipelineHarness()
        harness.handle([
            PipelineHarness.record(Self.job("big", tokens: (1...5).map(PipelineHarness.token), campaign: "spring"), offset: 1),
            PipelineHarness.record(Self.job("g1", tokens: [PipelineHarness.token(6)], campaign: "spring"), offset: 2),
            PipelineHarness.record(Self.job("g2", tokens: [PipelineHarness.token(7)], campaign: "summer"), offset: 3),
            PipelineHarness.record(Self.job("g3", tokens: [PipelineHarness.token(8)], campaign: "spring"), offset: 4),
        ])
        #expect(harness.sender.unanswered == 8)
        #expect(harness.producer.produced.isEmpty)

        harness.pipeline.cancellations.apply(Self.cancel(.campaign("spring")))
        #expect(harness.sender.unanswered == 1, "only summer's job waits")
        #expect(Self.values(harness, key: "big").filter { $0.contains(#""reason":"cancelled""#) }.count == 5)
        #expect(Self.values(harness, key: "big").last?.contains(#""counts":{"0 cancelled":5}"#) == true)
        for id in ["g1", "g3"] {
            #expect(Self.values(harness, key: id).last?.contains(#""counts":{"0 cancelled":1}"#) == true, "\(id)")
        }
        harness.sender.answerAll { _ in .answer(200) }
        #expect(Self.values(harness, key: "g2").last?.contains(#""counts":{"200":1}"#) == true)
        harness.producer.acknowledge()
        #expect(harness.released.completedOffsets.sorted() == [1, 2, 3, 4])

        harness.pipeline.cancellations.apply(.lift(.campaign("spring")))
        harness.handle([PipelineHarness.record(Self.job("later", tokens: [PipelineHarness.token(9)], campaign: "spring"), offset: 5)])
        #expect(harness.sender.unanswered == 1, "sent once the cancel is lifted")
    }

    /// The race: a job checked at intake before the cancel, handed to the pool after the cancel's
    /// sweep ran. The intake sees the cancel's epoch moved and sweeps again, so it ends cancelled.
    @Test func aJobCheckedJustBeforeACancelAndHandedOverJustAfterEndsCancelled() throws {
        let harness = try PipelineHarness()
        let cancellations = harness.pipeline.cancellations
        harness.sender.beforeSend.withLock { hook in
            hook = {
                // Between the intake's check and the hand-over: the cancel is applied and its
                // sweep finds nothing of the job in the pool yet.
                cancellations.apply(Self.cancel(.campaign("spring")))
            }
        }
        harness.handle([
            PipelineHarness.record(Self.job("j", tokens: (1...3).map(PipelineHarness.token), campaign: "spring"), offset: 9)
        ])
        harness.sender.beforeSend.withLock { $0 = nil }
        #expect(harness.sender.unanswered == 0, "swept again after the hand-over")
        let values = Self.values(harness, key: "j")
        #expect(values.filter { $0.contains(#""reason":"cancelled""#) }.count == 3)
        #expect(values.last?.contains(#""counts":{"0 cancelled":3}"#) == true)
    }

    /// A broadcast of the campaign: cancelled at intake when it arrives after the cancel, and
    /// ended by the sweep when it waits in its pool at the cancel.
    @Test func aBroadcastOfACancelledCampaignEndsCancelled() throws {
        let harness = try PipelineHarness()
        func broadcast(_ id: String) -> KafkaRecord {
            PipelineHarness.record(#"{"id":"\#(id)","campaign":"spring","channel_id":"AAAA","payload":{}}"#, offset: 1)
        }
        harness.handle([broadcast("waiting")])
        #expect(harness.sender.unanswered == 1)
        harness.pipeline.cancellations.apply(Self.cancel(.campaign("spring")))
        #expect(harness.sender.unanswered == 0)
        harness.handle([broadcast("later")])
        #expect(harness.sender.unanswered == 0)
        for id in ["waiting", "later"] {
            let values = Self.values(harness, key: id)
            #expect(values.count == 2, "\(id)")
            #expect(values.first?.contains(#""channel_id":"AAAA","app":"default","status":0,"reason":"cancelled""#) == true, "\(id)")
            #expect(values.last?.contains(#""channel_id":"AAAA","counts":{"0 cancelled":1}"#) == true, "\(id)")
        }
    }

    /// An expired cancel cancels nothing.
    @Test func aJobOfAnExpiredCancelIsSent() throws {
        let harness = try PipelineHarness()
        harness.pipeline.cancellations.apply(
            .cancel(target: .campaign("spring"), reason: nil, writtenAtMilliseconds: 1, expiresAtMilliseconds: 2)
        )
        harness.handle([PipelineHarness.record(Self.job("j", tokens: [PipelineHarness.token(1)], campaign: "spring"), offset: 1)])
        #expect(harness.sender.unanswered == 1)
    }
}
