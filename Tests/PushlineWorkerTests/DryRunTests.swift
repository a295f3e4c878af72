import PushlineAPNSCore
import PushlineKafka
import Testing

@testable import PushlineWorker

/// Dry runs (`dry_run` on a job, `worker.dry_run` for every job): how the field decodes, and that
/// a dry job goes through the pipeline to the point where it would be sent, then ends every token
/// `status 0, reason "dry_run"` with no request, its `job_done` counting them, and its record
/// released like any job's once Kafka has its records.
@Suite struct DryRunTests {
    static let results = "push.results"
    let decoder = JobDecoder(bundleIDs: ["default": "com.example.app"])
    static let token = String(repeating: "ab", count: 32)

    func decode(_ dryRun: String, with decoder: JobDecoder? = nil) -> Result<Job, JobRejection> {
        (decoder ?? self.decoder).decode(Array(#"{"id":"d1","token":"\#(Self.token)","payload":{},"dry_run":\#(dryRun)}"#.utf8))
    }

    @Test func dryRunTrueMakesADryJob() throws {
        #expect(try decode("true").get().dryRun)
        #expect(try decode(" true ").get().dryRun)
    }

    @Test func dryRunFalseNullOrAbsentMakesANormalJob() throws {
        #expect(try decode("false").get().dryRun == false)
        #expect(try decode("null").get().dryRun == false)
        let plain = try decoder.decode(Array(#"{"id":"d1","token":"\#(Self.token)","payload":{}}"#.utf8)).get()
        #expect(plain.dryRun == false)
    }

    @Test(arguments: [#""true""#, "1", "0", "{}", "[true]"]) func dryRunOfAnotherTypeRejectsTheJob(value: String) {
        guard case .failure(let rejection) = decode(value) else {
            Issue.record("dry_run: \(value) was accepted")
            return
        }
        #expect(rejection.code == .invalidField)
        #expect(rejection.description.contains("dry_run: not a boolean"), "\(rejection)")
        #expect(rejection.jobID == "d1")
    }

    @Test func aRepeatedDryRunRejectsTheJob() {
        let record = #"{"id":"d1","token":"\#(Self.token)","payload":{},"dry_run":false,"dry_run":true}"#
        guard case .failure(let rejection) = decoder.decode(Array(record.utf8)) else {
            Issue.record("a repeated dry_run was accepted")
            return
        }
        #expect(rejection.code == .duplicateField)
    }

    /// `worker.dry_run`: every job is dry, `"dry_run": false` included (the worker's word wins).
    @Test func theWorkersDryRunMakesEveryJobDry() throws {
        let worker = JobDecoder(bundleIDs: ["default": "com.example.app"], dryRun: true)
        #expect(try decode("false", with: worker).get().dryRun)
        #expect(try decode("null", with: worker).get().dryRun)
        #expect(try decode("true", with: worker).get().dryRun)
        #expect(PushlineConfiguration().worker.dryRun == false, "off by default")
        #expect(JobDecoder(bundleIDs: [:]).dryRun == false)
    }

    /// Everything else a job is checked for still rejects a dry one: a dry run says what a real
    /// send would reject.
    @Test func aDryJobIsValidatedLikeAnyOther() {
        let tooLarge = String(repeating: "x", count: 4100)
        let record = #"{"id":"d2","token":"\#(Self.token)","payload":{"a":"\#(tooLarge)"},"dry_run":true}"#
        guard case .failure(let rejection) = decoder.decode(Array(record.utf8)) else {
            Issue.record("an oversize dry job was accepted")
            return
        }
        #expect(rejection.code == .payloadTooLarge)
        let badToken = #"{"id":"d3","tokens":["zz"],"payload":{},"dry_run":true}"#
        guard case .failure(let bad) = decoder.decode(Array(badToken.utf8)) else {
            Issue.record("a dry job with a bad token was accepted")
            return
        }
        #expect(bad.code == .invalidField)
    }

    static func dryJob(_ id: String, tokens: [String], extra: String = "") -> String {
        let list = tokens.map { "\"\($0)\"" }.joined(separator: ",")
        return #"{"id":"\#(id)","tokens":[\#(list)],"payload":{"aps":{"alert":"hi"}},"dry_run":true\#(extra)}"#
    }

    /// What a job published on the results topic, by kind.
    static func records(of job: String, in produced: [FakeProducer.Record]) -> (deliveries: [String], done: [String]) {
        let mine = produced.filter { $0.key == job }.map(\.value)
        return (mine.filter { $0.hasPrefix(#"{"type":"delivery""#) }, mine.filter { $0.hasPrefix(#"{"type":"job_done""#) })
    }

    /// A dry job of several tokens, single-token dry jobs in a run of several records (which would
    /// make a group), a dry broadcast and a normal job: nothing of the dry ones reaches the
    /// sender, every dry token ends `status 0, reason "dry_run"`, each job has its `job_done`,
    /// and the records are completed once Kafka has their records; the normal job is sent.
    @Test func aDryJobSendsNothingAndEndsEveryTokenDryRun() throws {
        let harness = try PipelineHarness()
        let tokens = (1...5).map(PipelineHarness.token)
        harness.handle([
            PipelineHarness.record(Self.dryJob("many", tokens: tokens), offset: 1),
            PipelineHarness.record(Self.dryJob("one-a", tokens: [PipelineHarness.token(6)]), offset: 2),
            PipelineHarness.record(Self.dryJob("one-b", tokens: [PipelineHarness.token(7)]), offset: 3),
            PipelineHarness.record(
                #"{"id":"cast","channel_id":"AAAA","payload":{"aps":{"event":"update"}},"dry_run":true}"#,
                offset: 4
            ),
            PipelineHarness.record(PipelineHarness.job("real", tokens: [PipelineHarness.token(8), PipelineHarness.token(9)]), offset: 5),
        ])
        #expect(harness.sender.unanswered == 2, "only the normal job's two tokens reach the sender")

        let produced = harness.produced(on: Self.results)
        for (job, count) in [("many", 5), ("one-a", 1), ("one-b", 1), ("cast", 1)] {
            let (deliveries, done) = Self.records(of: job, in: produced)
            #expect(deliveries.count == count, "\(job)")
            for delivery in deliveries {
                #expect(delivery.contains(#""status":0,"reason":"dry_run""#), "\(delivery)")
                #expect(delivery.contains(#""final":true"#), "\(delivery)")
                #expect(delivery.contains(#""attempts":0"#), "\(delivery)")
            }
            #expect(done.count == 1, "\(job)")
            // A broadcast's job_done names its channel in place of a token count.
            let recipients = job == "cast" ? #""channel_id":"AAAA""# : #""tokens":\#(count),"#
            #expect(done.first?.contains(recipients) == true, "\(done)")
            #expect(done.first?.contains(#""counts":{"0 dry_run":\#(count)}"#) == true, "\(done)")
        }
        let many = Self.records(of: "many", in: produced).deliveries
        for token in tokens {
            #expect(many.filter { $0.contains(#""token":"\#(token)""#) }.count == 1, "\(token)")
        }
        #expect(Self.records(of: "cast", in: produced).deliveries.first?.contains(#""channel_id":"AAAA""#) == true)
        #expect(Self.records(of: "real", in: produced).deliveries.isEmpty, "the normal job waits for APNs")

        // The dry jobs' records are completed once Kafka has their records; the normal one's not yet.
        harness.producer.acknowledge()
        #expect(harness.released.completedOffsets.sorted() == [1, 2, 3, 4])
        #expect(harness.gate.jobs.value == 1 && harness.gate.count == 2)

        harness.sender.answerAll { _ in .answer(200) }
        let real = Self.records(of: "real", in: harness.produced(on: Self.results))
        #expect(real.deliveries.count == 2 && real.deliveries.allSatisfy { $0.contains(#""status":200"#) })
        harness.producer.acknowledge()
        #expect(harness.released.completedOffsets.sorted() == [1, 2, 3, 4, 5])
        #expect(harness.gate.jobs.value == 0 && harness.gate.count == 0)
    }

    /// A dry job past its deadline says `expired`, as it would if it were sent: the dry run ends
    /// only what would have gone to APNs.
    @Test func anExpiredDryJobSaysExpired() throws {
        let harness = try PipelineHarness()
        let tokens = [PipelineHarness.token(1), PipelineHarness.token(2)]
        harness.handle([
            PipelineHarness.record(Self.dryJob("late", tokens: tokens, extra: #","deadline":"2020-01-01T00:00:00Z""#), offset: 9)
        ])
        #expect(harness.sender.unanswered == 0)
        let (deliveries, done) = Self.records(of: "late", in: harness.produced(on: Self.results))
        #expect(deliveries.count == 2 && deliveries.allSatisfy { $0.contains(#""status":0,"reason":"expired""#) }, "\(deliveries)")
        #expect(done.first?.contains(#""counts":{"0 expired":2}"#) == true, "\(done)")
    }

    /// `worker.dry_run`: jobs without the field are dry too.
    @Test func aDryWorkerSendsNothing() throws {
        let harness = try PipelineHarness(dryRun: true)
        harness.handle([
            PipelineHarness.record(PipelineHarness.job("w1", tokens: [PipelineHarness.token(1), PipelineHarness.token(2)]), offset: 1),
            PipelineHarness.record(PipelineHarness.job("w2", tokens: [PipelineHarness.token(3)]), offset: 2),
            PipelineHarness.record(PipelineHarness.job("w3", tokens: [PipelineHarness.token(4)]), offset: 3),
        ])
        #expect(harness.sender.unanswered == 0)
        let produced = harness.produced(on: Self.results)
        for (job, count) in [("w1", 2), ("w2", 1), ("w3", 1)] {
            let (deliveries, done) = Self.records(of: job, in: produced)
            #expect(deliveries.count == count && deliveries.allSatisfy { $0.contains(#""reason":"dry_run""#) }, "\(job)")
            #expect(done.first?.contains(#""counts":{"0 dry_run":\#(count)}"#) == true, "\(done)")
        }
        harness.producer.acknowledge()
        #expect(harness.released.completedOffsets.sorted() == [1, 2, 3])
    }
}
