import PushlineAPNSCore
import PushlineKafka
import Testing

@testable import PushlineWorker

/// Single-token jobs in a worker with several apps take the same way as with one: they join their
/// app's group (one request batch, one progress), their app's part of the window moves with the
/// gate's total (`InflightGate` is its one owner), a held app's member withdrawn in a revoke is
/// parked as a job of its own would be, and a job read back from the deferred topic keeps its
/// first source in a group too (fakes: no broker, no socket).
@Suite struct SeveralAppsGroupTests {
    static let results = "push.results"

    static func single(_ id: String, _ n: Int) -> String {
        PipelineHarness.job(id, tokens: [PipelineHarness.token(n)])
    }

    @Test func singleTokenJobsOfSeveralAppsGoInGroupsAndTheAppsPartFollowsTheGate() throws {
        let harness = try PipelineHarness(severalApps: true)
        let load = try #require(harness.window?.load(of: PipelineHarness.app))
        harness.handle((1...5).map { PipelineHarness.record(Self.single("s\($0)", $0), offset: Int64($0)) })
        #expect(harness.sender.batches.count == 1, "one batch for the group")
        #expect(harness.sender.batches.first?.batch.count == 5)
        #expect(load.inflight.value == 5 && harness.gate.count == 5)
        harness.sender.answerAll { _ in .answer(200) }
        #expect(load.inflight.value == 5, "nothing leaves before Kafka has the records")
        _ = harness.producer.acknowledge()
        #expect(harness.released.completedOffsets.sorted() == [1, 2, 3, 4, 5])
        #expect(load.inflight.value == 0 && harness.gate.count == 0 && harness.gate.jobs.value == 0)
        let deliveries = harness.produced(on: Self.results).filter { $0.value.hasPrefix(#"{"type":"delivery""#) }
        #expect(deliveries.count == 5)
    }

    @Test func aHeldAppsWithdrawnMemberIsParkedAndAnAnsweredOneCompletes() throws {
        let harness = try PipelineHarness(severalApps: true)
        let load = try #require(harness.window?.load(of: PipelineHarness.app))
        let jobs = (1...3).map { Self.single("h\($0)", $0) }
        harness.handle(jobs.enumerated().map { PipelineHarness.record($1, offset: Int64($0 + 1)) })
        load.isHeld = true
        let withdrawn = APNSOutcome(noResponse: .withdrawn, attempts: 0, latencyMilliseconds: 0)
        harness.sender.answerAll { $0 == 0 ? .answer(200) : withdrawn }
        let copies = harness.produced(on: PipelineHarness.deferredTopic)
        #expect(copies.map(\.value) == Array(jobs[1...]), "as their sender wrote them")
        #expect(copies.compactMap { ParkedRecordHeaders($0.headers)?.source.offset } == [2, 3])
        #expect(load.inflight.value == 1, "the parked members left the window; the answered one waits for Kafka")
        #expect(harness.released.abandoned.isEmpty, "none given up")
        _ = harness.producer.acknowledge()
        #expect(harness.released.completedOffsets.sorted() == [1, 2, 3])
        #expect(load.inflight.value == 0 && harness.gate.count == 0 && harness.gate.jobs.value == 0)

        // Not held: a withdrawn member is given up, as before.
        load.isHeld = false
        harness.handle([4, 5].map { PipelineHarness.record(Self.single("n\($0)", $0), offset: Int64($0)) })
        harness.sender.answerAll { _ in withdrawn }
        #expect(harness.released.abandoned.map(\.offset).sorted() == [4, 5])
        #expect(harness.produced(on: PipelineHarness.deferredTopic).count == 2)
        #expect(load.inflight.value == 0 && harness.gate.count == 0)
    }

    @Test func aJobReadBackFromTheDeferredTopicKeepsItsFirstSourceInAGroup() throws {
        let harness = try PipelineHarness(severalApps: true)
        let first = RecordSource(topic: PipelineHarness.jobsTopic, partition: 3, offset: 77)
        var decoded = (1...2).map { harness.pipeline.decode(PipelineHarness.record(Self.single("d\($0)", $0), offset: Int64($0))) }
        decoded[1].source = first
        harness.pipeline.handle(decoded, started: [true, true])
        #expect(harness.sender.batches.count == 1 && harness.sender.batches.first?.batch.count == 2)
        harness.sender.answerAll { _ in .answer(200) }
        let records = harness.produced(on: Self.results).map(\.value)
        let named = records.filter { $0.contains(#""job_id":"d2""#) }
        #expect(named.count == 2, "its delivery and its job_done")
        let firstSource = #""source":{"topic":"push.jobs","partition":3,"offset":77}"#
        #expect(named.allSatisfy { $0.contains(firstSource) }, "\(named)")
        let other = records.filter { $0.contains(#""job_id":"d1""#) }
        #expect(other.count == 2 && other.allSatisfy { $0.contains(#""source":{"topic":"push.jobs","partition":0,"offset":1}"#) })
    }
}
