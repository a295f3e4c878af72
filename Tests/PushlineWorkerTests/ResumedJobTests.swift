import PushlineAPNSCore
import PushlineKafka
import Testing

@testable import PushlineWorker

/// A job given up with part of its tokens answered and the rest withdrawn (a lost assignment's
/// revoke) keeps what it needs to send only the rest (`ResumedJob`); fetched again with it, the
/// job is sent to its unanswered tokens only, and its `job_done` counts the whole job.
@Suite struct ResumedJobTests {
    let withdrawn = APNSOutcome(noResponse: .withdrawn, attempts: 0, latencyMilliseconds: 0)
    let tokens = (0..<4).map { PipelineHarness.token($0) }

    /// The record of job "part" at offset 5, with what was kept of it.
    func record(resumed: ResumedJob? = nil, tokens: [String]? = nil) -> KafkaRecord {
        var record = PipelineHarness.record(PipelineHarness.job("part", tokens: tokens ?? self.tokens), offset: 5)
        record.resumed = resumed
        return record
    }

    @Test func aJobGivenUpInPartIsSentAgainToItsUnansweredTokensOnly() throws {
        let harness = try PipelineHarness()
        harness.handle([record()])
        // Tokens 1 and 3 are answered (410 and 200); 0 and 2 are withdrawn.
        harness.sender.answerAll { n in n == 1 ? .answer(410, .unregistered) : n == 3 ? .answer(200) : withdrawn }
        _ = harness.producer.acknowledge()
        let id = try #require(harness.released.abandoned.first)
        let kept = try #require(harness.released.kept[id])
        #expect(kept.unanswered == [0, 2])
        #expect(kept.tokens == 4)
        #expect(harness.released.completed.isEmpty)
        let firstRun = harness.produced(on: "push.results").count

        harness.handle([record(resumed: kept)])
        #expect(harness.sender.unanswered == 2, "only the unanswered tokens are sent")
        harness.sender.answerAll { _ in .answer(200) }
        _ = harness.producer.acknowledge()
        #expect(harness.released.completedOffsets == [5])
        #expect(harness.released.completed.first?.weight == 2)
        let results = harness.produced(on: "push.results").dropFirst(firstRun)
        let deliveries = results.filter { $0.value.contains(#""type":"delivery""#) }
        #expect(deliveries.count == 2)
        #expect(deliveries.allSatisfy { $0.value.contains(tokens[0]) || $0.value.contains(tokens[2]) })
        let done = try #require(results.last)
        #expect(done.value.hasPrefix(#"{"type":"job_done","job_id":"part""#))
        #expect(done.value.contains(#""tokens":4"#), "\(done.value)")
        #expect(done.value.contains(#""counts":{"200":3,"410 Unregistered":1}"#), "\(done.value)")
    }

    @Test func aResumedRunGivenUpAgainKeepsTheRecordsIndices() throws {
        let harness = try PipelineHarness()
        let kept = ResumedJob(unanswered: [0, 2, 3], tally: JobTally(), tokens: 4)
        harness.handle([record(resumed: kept)])
        // The resumed run's second token (the record's 2) is answered; the others withdrawn.
        harness.sender.answerAll { n in n == 1 ? .answer(200) : withdrawn }
        _ = harness.producer.acknowledge()
        let again = try #require(harness.released.kept.values.first)
        #expect(again.unanswered == [0, 3])
        #expect(again.tally.outcomes == 1)
    }

    @Test func aJobKeepsNothingWhenNoTokenWasAnsweredOrOneWasShutDown() throws {
        let harness = try PipelineHarness()
        harness.handle([record()])
        harness.sender.answerAll { _ in withdrawn }
        _ = harness.producer.acknowledge()
        let shutDown = APNSOutcome(noResponse: .shutdown, attempts: 0, latencyMilliseconds: 0)
        harness.handle([record()])
        harness.sender.answerAll { n in n == 0 ? .answer(200) : n == 1 ? shutDown : withdrawn }
        _ = harness.producer.acknowledge()
        #expect(harness.released.abandoned.count == 2)
        #expect(harness.released.kept.isEmpty, "each is done again whole")
    }

    @Test func aRecordThatDoesNotMatchWhatWasKeptIsDoneWhole() throws {
        let harness = try PipelineHarness()
        let kept = ResumedJob(unanswered: [1], tally: JobTally(), tokens: 4)
        harness.handle([record(resumed: kept, tokens: Array(tokens.prefix(3)))])
        #expect(harness.sender.unanswered == 3)
    }
}
