import PushlineAPNSCore
import PushlineKafka
import Testing

@testable import PushlineWorker

/// `JobPipeline` with a fake APNs client and a fake producer (`FakeSender`, `FakeProducer`, `PipelineHarness`): what each
/// job publishes, and when its record is released for commit. No broker, no socket, no sleep:
/// the test answers the requests and acknowledges the records itself.
@Suite struct JobPipelineTests {
    static let results = "push.results"

    /// A job of three tokens: each token gets one delivery record, then the job its `job_done`,
    /// whether its outcomes come in a run (the worker's way) or one by one.
    @Test(arguments: [true, false]) func everyTokenOfAJobGetsOneResult(runs: Bool) throws {
        let harness = try PipelineHarness(runs: runs)
        let tokens = (1...3).map(PipelineHarness.token)
        harness.handle([PipelineHarness.record(PipelineHarness.job("j1", tokens: tokens), offset: 7)])
        #expect(harness.sender.unanswered == 3)
        #expect(harness.producer.produced.isEmpty, "nothing is published before an outcome")
        harness.sender.answerAll { _ in .answer(200) }

        let records = harness.produced(on: Self.results)
        let deliveries = records.filter { $0.value.hasPrefix(#"{"type":"delivery""#) }
        #expect(deliveries.count == 3)
        for token in tokens {
            #expect(deliveries.filter { $0.value.contains(#""token":"\#(token)""#) }.count == 1, "\(token)")
        }
        #expect(deliveries.allSatisfy { $0.key == "j1" })
        // The job_done is last, keyed like the deliveries (the same partition, after them).
        let last = try #require(records.last)
        #expect(last.value.hasPrefix(#"{"type":"job_done","job_id":"j1""#) && last.key == "j1")
        #expect(records.count == 4)
    }

    /// At-least-once: the record is completed (its offset may be committed) only once Kafka has
    /// acknowledged every record of the job, the `job_done` included; until then the job stays in
    /// the in-flight gate.
    @Test func aJobIsReleasedOnlyOnceAllItsResultsAreAcknowledged() throws {
        let harness = try PipelineHarness()
        harness.handle([
            PipelineHarness.record(PipelineHarness.job("j2", tokens: [PipelineHarness.token(1), PipelineHarness.token(2)]), offset: 11)
        ])
        harness.sender.answerAll { _ in .answer(200) }
        let total = harness.producer.waiting.count
        #expect(total == 3)
        for _ in 0..<(total - 1) {
            harness.producer.acknowledge(1)
            #expect(harness.released.completed.isEmpty, "completed before every result is acknowledged")
            #expect(harness.gate.jobs.value == 1)
        }
        harness.producer.acknowledge(1)
        #expect(harness.released.completedOffsets == [11])
        #expect(harness.released.completed.first?.weight == 2)
        #expect(harness.gate.jobs.value == 0 && harness.gate.count == 0)
    }

    /// The same for single-token jobs, which a run of several records puts in a group: each
    /// member's records are acknowledged before the group completes them, together.
    @Test func aGroupOfSingleTokenJobsIsReleasedOnlyOnceAllItsResultsAreAcknowledged() throws {
        let harness = try PipelineHarness()
        let records = (0..<4).map {
            PipelineHarness.record(PipelineHarness.job("s\($0)", tokens: [PipelineHarness.token($0)]), offset: Int64(20 + $0))
        }
        harness.handle(records)
        #expect(harness.sender.unanswered == 4)
        harness.sender.answerAll { _ in .answer(200) }
        let produced = harness.produced(on: Self.results)
        #expect(produced.count == 8, "a delivery and a job_done per job")
        for index in 0..<4 {
            let mine = produced.filter { $0.key == "s\(index)" }.map(\.value)
            #expect(mine.count == 2 && mine[0].hasPrefix(#"{"type":"delivery""#) && mine[1].hasPrefix(#"{"type":"job_done""#))
        }
        harness.producer.acknowledge(7)
        #expect(harness.released.completed.isEmpty)
        #expect(harness.gate.jobs.value == 4)
        harness.producer.acknowledge()
        #expect(harness.released.completedOffsets.sorted() == [20, 21, 22, 23])
        #expect(harness.gate.jobs.value == 0)
    }

    /// A record that is not a job: a `rejected` result and a dead-letter copy (its bytes and
    /// headers, with the error); nothing is sent, and the record is completed once both are in Kafka.
    @Test func aMalformedJobIsRejectedWithADeadLetterCopy() throws {
        let harness = try PipelineHarness()
        harness.handle([PipelineHarness.record("not json", offset: 3)])
        #expect(harness.sender.unanswered == 0)
        let results = harness.produced(on: Self.results)
        #expect(results.count == 1 && results[0].value.hasPrefix(#"{"type":"rejected""#), "\(results.map(\.value))")
        let dead = harness.produced(on: "push.dead")
        #expect(dead.count == 1)
        #expect(dead.first?.value == "not json")
        let headers = dead.first?.headers.map(\.key) ?? []
        #expect(headers == ["origin", "pushline-error", "pushline-source"])
        harness.producer.acknowledge(1)
        #expect(harness.released.completed.isEmpty)
        harness.producer.acknowledge()
        #expect(harness.released.completedOffsets == [3])
        #expect(harness.released.completed.first?.weight == 0)
        #expect(harness.gate.jobs.value == 0)
    }

    /// A 410 (Unregistered) invalidates its token: a `token_invalidated` record keyed by token,
    /// on the results topic and on the invalidations topic; the other token is delivered.
    @Test func a410InvalidatesTheToken() throws {
        let harness = try PipelineHarness()
        let (live, dead) = (PipelineHarness.token(1), PipelineHarness.token(2))
        harness.handle([PipelineHarness.record(PipelineHarness.job("j3", tokens: [live, dead]), offset: 5)])
        harness.sender.answerAll { $0 == 1 ? .answer(410, .unregistered) : .answer(200) }
        let invalidations = harness.produced(on: "push.invalidations")
        #expect(invalidations.count == 1)
        #expect(invalidations.first?.key == dead)
        #expect(invalidations.first?.value.hasPrefix(#"{"type":"token_invalidated""#) == true)
        let onResults = harness.produced(on: Self.results).filter { $0.value.hasPrefix(#"{"type":"token_invalidated""#) }
        #expect(onResults.map(\.key) == [dead])
        #expect(harness.produced(on: Self.results).filter { $0.value.contains(#""token":"\#(live)""#) }.count == 1)
        harness.producer.acknowledge()
        #expect(harness.released.completedOffsets == [5])
    }

    /// Graceful shutdown waits for the jobs started: it ends once every job has ended, answered
    /// (and completed) or abandoned by its pool's shutdown (given up uncompleted, for the next
    /// owner), and not before.
    /// With several apps, a held app's job whose every token is withdrawn (a revoke) is parked:
    /// its bytes go to the deferred topic with its source, and its record is completed only once
    /// the copy is acknowledged, so the revoke commits past it. A job with a token answered is
    /// given up as before, and so is a withdrawn job of an app that is not held.
    @Test func aHeldAppsWithdrawnJobIsParkedAndCompletedOnceItsCopyIsInKafka() throws {
        let harness = try PipelineHarness(severalApps: true)
        let (one, two) = (PipelineHarness.token(1), PipelineHarness.token(2))
        let whole = PipelineHarness.job("whole", tokens: [one, two])
        harness.handle([
            PipelineHarness.record(whole, offset: 1),
            PipelineHarness.record(PipelineHarness.job("part", tokens: [one, two]), offset: 2),
        ])
        let load = try #require(harness.window?.load(of: PipelineHarness.app))
        #expect(load.inflight.value == 4)
        load.isHeld = true
        let withdrawn = APNSOutcome(noResponse: .withdrawn, attempts: 0, latencyMilliseconds: 0)
        // The first job's two tokens are withdrawn; the second's first token was answered.
        harness.sender.answerAll { n in n == 2 ? .answer(200) : withdrawn }
        let copies = harness.produced(on: PipelineHarness.deferredTopic)
        try #require(copies.count == 1)
        #expect(copies[0].value == whole, "the job's bytes, as its sender wrote them")
        let headers = ParkedRecordHeaders(copies[0].headers)
        #expect(headers?.source == RecordSource(topic: PipelineHarness.jobsTopic, partition: 0, offset: 1))
        #expect(headers?.app == PipelineHarness.app)
        #expect(load.inflight.value == 2, "the parked job's notifications left the window; the other's wait for its record")
        #expect(!harness.released.completedOffsets.contains(1), "completed before its copy is in Kafka")
        #expect(harness.gate.jobs.value == 2)
        _ = harness.producer.acknowledge()
        #expect(harness.released.completedOffsets == [1], "completed once its copy is in Kafka")
        #expect(harness.released.abandoned.map(\.offset) == [2], "the answered job is given up")
        #expect(load.inflight.value == 0 && harness.gate.count == 0 && harness.gate.jobs.value == 0)

        // Not held: a withdrawn job is given up.
        load.isHeld = false
        harness.handle([PipelineHarness.record(whole, offset: 3)])
        harness.sender.answerAll { _ in withdrawn }
        #expect(harness.produced(on: PipelineHarness.deferredTopic).count == 1)
        #expect(harness.released.abandoned.map(\.offset) == [2, 3])
    }

    @Test func shutdownDrainsTheJobsStarted() async throws {
        let harness = try PipelineHarness()
        harness.handle([
            PipelineHarness.record(PipelineHarness.job("j4", tokens: [PipelineHarness.token(1), PipelineHarness.token(2)]), offset: 1)
        ])
        harness.handle([PipelineHarness.record(PipelineHarness.job("j5", tokens: [PipelineHarness.token(3)]), offset: 2)])
        #expect(harness.gate.jobs.value == 2)
        let drain = ShutdownDrain(
            activeJobs: harness.gate.jobs,
            timeout: .seconds(300),
            onlyHeldWorkLeft: { false },
            holdChanged: ChangeSignal()
        )
        let ending = Task { await drain.run() }
        // j4 is answered; j5's pool shuts down before it answers.
        harness.sender.answerAll { $0 < 2 ? .answer(200) : APNSOutcome(noResponse: .shutdown, attempts: 0, latencyMilliseconds: 0) }
        #expect(harness.gate.jobs.value == 1, "the abandoned job left; the answered one waits for Kafka")
        #expect(harness.released.abandoned.map(\.offset) == [2])
        harness.producer.acknowledge()
        #expect(await ending.value == .finished)
        #expect(harness.released.completedOffsets == [1])
        #expect(harness.produced(on: Self.results).allSatisfy { $0.key == "j4" }, "nothing published for the abandoned job")
    }
}
