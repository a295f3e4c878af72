import Logging
import PushlineAPNSCore
import PushlineKafka

@testable import PushlineWorker

/// A `JobPipeline` over the fakes: no broker, no socket, no APNs.
struct PipelineHarness {
    let sender: FakeSender
    let producer: FakeProducer
    let publisher: ResultPublisher
    let pipeline: JobPipeline
    let gate: InflightGate
    let released = ReleasedRecords()
    /// With `severalApps`: the apps' shares of the window (a second app, "other", is configured).
    let window: AppWindow?

    static let app = "default"
    static let jobsTopic = "push.jobs"

    static let deferredTopic = "push.jobs.deferred"

    /// `runs`: the fake client answers inside a run of outcomes (the worker's way), or one by one.
    /// `severalApps`: a second app is configured, so jobs keep their bytes and a held app's
    /// withdrawn jobs are parked on `deferredTopic`.
    init(runs: Bool = true, severalApps: Bool = false, results: ResultsMode = .full) throws {
        var logger = Logger(label: "pipeline-test")
        logger.logLevel = .critical
        let producer = try FakeProducer()
        let metrics = WorkerMetrics()
        let publisher = ResultPublisher(producer: producer, logger: logger, metrics: metrics)
        let sender = FakeSender(outcomeScope: runs ? publisher : nil)
        let gate = InflightGate(limit: 10_000)
        let released = released
        let window = severalApps ? AppWindow(apps: [Self.app: 0, "other": 0], gate: gate) : nil
        self.window = window
        self.sender = sender
        self.producer = producer
        self.publisher = publisher
        self.gate = gate
        self.pipeline = JobPipeline(
            decoder: JobDecoder(
                bundleIDs: severalApps ? [Self.app: "com.example.app", "other": "com.example.other"] : [Self.app: "com.example.app"]
            ),
            clients: severalApps ? [Self.app: sender, "other": FakeSender(outcomeScope: nil)] : [Self.app: sender],
            publisher: publisher,
            topics: .init(
                results: try producer.topic("push.results"),
                invalidations: try producer.topic("push.invalidations"),
                deadLetter: try producer.topic("push.dead")
            ),
            invalidateOn: ["Unregistered"],
            results: results,
            gate: gate,
            window: window,
            metrics: metrics,
            logger: logger,
            complete: { id, weight in released.complete([(id, weight)]) },
            completeAll: { records in released.complete(records) },
            abandon: { id, kept in released.abandon(id, resumable: kept) },
            parker: severalApps ? JobParker(publisher: publisher, topic: try producer.topic(Self.deferredTopic), metrics: [:]) : nil
        )
    }

    /// A job record at `offset` of partition 0.
    static func record(_ json: String, offset: Int64) -> KafkaRecord {
        KafkaRecord(
            id: RecordID(topic: jobsTopic, partition: 0, offset: offset, generation: 1),
            key: nil,
            value: Array(json.utf8),
            headers: [KafkaHeader(key: "origin", value: Array("test".utf8))],
            timestampMilliseconds: nil
        )
    }

    /// A device token: 64 hex digits, `n` in the last ones.
    static func token(_ n: Int) -> String {
        let digits = String(n, radix: 16)
        return String(repeating: "a", count: 64 - digits.count) + digits
    }

    static func job(_ id: String, tokens: [String]) -> String {
        let list = tokens.map { "\"\($0)\"" }.joined(separator: ",")
        return #"{"id":"\#(id)","tokens":[\#(list)],"payload":{"aps":{"alert":"hi"}}}"#
    }

    /// Starts `records` as one intake run (all started), as the bulk intake does.
    func handle(_ records: [KafkaRecord]) {
        pipeline.handle(records.map(pipeline.decode), started: records.map { _ in true })
    }

    /// The records produced on `topic`, in order.
    func produced(on topic: String) -> [FakeProducer.Record] {
        producer.produced.filter { $0.topic == topic }
    }
}

extension APNSOutcome {
    static func answer(_ status: Int, _ reason: APNSReason? = nil) -> APNSOutcome {
        APNSOutcome(
            response: APNSResponse(status: status, reason: reason, timestamp: status == 410 ? 1_700_000_000_000 : nil, apnsID: nil),
            attempts: 1,
            latencyMilliseconds: 2
        )
    }
}
