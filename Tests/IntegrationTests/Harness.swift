import Foundation
import Logging
import PushlineAPNSMock
import PushlineKafka
import PushlineTestSupport
import Synchronization

/// Apps other than the one default app on the harness's mock: the `apps:` section (app name ->
/// its keys, as in the YAML) and the CA file to trust, given the harness's mock.
struct AppsOverride {
    var apps: (MockFixture) -> [String: Any]
    var caFile: (MockFixture) -> String

    /// One app's keys, as `apps.NAME` spells them: the mock's bundle id, token auth with
    /// `keyFrom`'s signing key, and `extra` keys (endpoint, proxy, max_rate, ...).
    static func tokenApp(keyFrom mock: MockFixture, _ extra: [String: Any] = [:]) -> [String: Any] {
        let app: [String: Any] = [
            "bundle_id": MockFixture.bundleID,
            "auth": ["type": "token", "key_file": mock.keyFile, "key_id": MockFixture.keyID, "team_id": MockFixture.teamID],
        ]
        return app.merging(extra) { _, new in new }
    }
}

/// The real pieces for an end-to-end run: the embedded broker with the contract's topics, the mock
/// APNs over TLS, a configuration file, and the `pushline` binary as a child process.
final class Harness: Sendable {
    static let jobsTopic = "push.jobs"
    static let resultsTopic = "push.results"
    static let deadLetterTopic = "push.jobs.dlq"
    static let deferredTopic = "push.jobs.deferred"
    static let invalidationsTopic = "push.invalidations"
    static let urgentJobsTopic = "push.jobs.urgent"
    static let jobPartitions = 4

    let broker: EmbeddedBroker
    let mock: MockFixture
    let directory: URL
    let configPath: String
    let groupID: String
    /// Held while the harness lives: the worker's metrics server binds it (no port race).
    let metricsPort: ReservedPort
    let logger = Logger(label: "integration")

    static func start(
        maxInflight: Int = 20_000,
        shutdownTimeoutMilliseconds: Int = 30_000,
        maxAttempts: Int = 5,
        apps: AppsOverride? = nil,
        urgentLane: Bool = false,
        results: String = "full",
        connections: Int? = nil,
        /// `apns.connect_spacing_ms`; nil: the default (each connection a second after the one before).
        connectSpacingMilliseconds: Int? = nil,
        /// `apns.request_timeout_ms`. A request that times out is sent again, and the suites count
        /// requests and final records: on a loaded CI host a 5 s deadline fired on requests the mock
        /// answered late, and their resends were counted as duplicates (1,197 requests recorded for
        /// 600 single-token jobs). No suite tests the timeout itself, so a slow host cannot trip 60 s.
        requestTimeoutMilliseconds: Int = 60_000,
        /// `apns.ping_timeout_ms`, for the same reason: beside 22 other suites on CI's two cores the
        /// mock (in this process) once left a PING unanswered for 10 s, the worker replaced the
        /// connection and sent its 220 unanswered requests again, which the header test counts.
        pingTimeoutMilliseconds: Int = 60_000,
        _ configureMock: (inout MockConfiguration) -> Void = { _ in }
    ) async throws -> Harness {
        let broker = try await EmbeddedBroker()
        try await broker.createTopic(jobsTopic, partitions: jobPartitions)
        try await broker.createTopic(resultsTopic, partitions: 4)
        try await broker.createTopic(deadLetterTopic, partitions: 1)
        try await broker.createTopic(invalidationsTopic, partitions: 2)
        // Where a worker with several apps parks their jobs (docs/kafka.md, "Apps kept apart").
        try await broker.createTopic(deferredTopic, partitions: 2)
        if urgentLane { try await broker.createTopic(urgentJobsTopic, partitions: 2) }
        let mock = try await MockFixture.start(tokenAuth: true) { configuration in
            configuration.topics = [MockFixture.bundleID]
            configureMock(&configuration)
        }
        let directory = try ProjectPaths.temporaryDirectory("e2e")
        let metricsPort = try ReservedPort()
        let groupID = "pushline-\(UUID().uuidString.prefix(8))"
        // The configuration is written by scripts/stack config, like every stack's: one token app
        // on the mock unless the test gives its own apps, and this test's tuning on top.
        let spec: [String: Any] = [
            "brokers": broker.bootstrapServers,
            "group_id": groupID,
            "metrics_listen": "127.0.0.1:\(metricsPort.port)",
            "apns_endpoint": mock.endpoint,
            "ca_file": apps?.caFile(mock) ?? mock.caFile,
            "key_file": mock.keyFile,
            "key_id": MockFixture.keyID,
            "team_id": MockFixture.teamID,
            "bundle_id": MockFixture.bundleID,
            "apps": apps.map { $0.apps(mock) as Any } ?? NSNull(),
            "topics": [
                "jobs_topic": jobsTopic, "results_topic": resultsTopic,
                "invalidations_topic": invalidationsTopic, "dead_letter_topic": deadLetterTopic,
                "urgent_jobs_topic": urgentLane ? urgentJobsTopic : "",
            ],
            "overrides": [
                "kafka": ["properties": ["heartbeat.interval.ms": "500", "max.poll.interval.ms": "90000"]],
                "apns": [
                    "request_timeout_ms": requestTimeoutMilliseconds, "ping_timeout_ms": pingTimeoutMilliseconds,
                    "max_attempts": maxAttempts,
                ]
                .merging(connections.map { ["connections": $0] } ?? [:]) { _, new in new }
                .merging(connectSpacingMilliseconds.map { ["connect_spacing_ms": $0] } ?? [:]) { _, new in new },
                "worker": ["max_inflight": maxInflight, "shutdown_timeout_ms": shutdownTimeoutMilliseconds, "results": results],
            ] as [String: Any],
        ]
        let configPath = directory.appendingPathComponent("config.yaml").path
        try await writeStackConfig(spec, to: configPath)
        return Harness(broker: broker, mock: mock, directory: directory, configPath: configPath, groupID: groupID, metricsPort: metricsPort)
    }

    private init(broker: EmbeddedBroker, mock: MockFixture, directory: URL, configPath: String, groupID: String, metricsPort: ReservedPort)
    {
        self.broker = broker
        self.mock = mock
        self.directory = directory
        self.configPath = configPath
        self.groupID = groupID
        self.metricsPort = metricsPort
    }

    func stop() async {
        try? await mock.stop()
        broker.stop()
    }

    // MARK: Jobs

    /// Produces `values` (keyed by `keys`, with `headers(i)` on record `i`) to `topic` (the jobs
    /// topic by default); returns each record's partition and offset from the delivery reports.
    func produce(
        _ values: [[UInt8]],
        keys: [String?],
        topic: String = jobsTopic,
        headers: (Int) -> [KafkaHeader] = { _ in [] }
    ) async throws -> [DeliveryReport] {
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                bootstrapServers: broker.bootstrapServers,
                properties: ["message.max.bytes": "4000000"]
            ),
            logger: logger
        )
        let reports = Mutex<[Int: DeliveryReport]>([:])
        let failures = Mutex<[String]>([])
        for (index, value) in values.enumerated() {
            let key = keys[index].map { Array($0.utf8) }
            while true {
                do throws(KafkaError) {
                    try producer.send(topic: topic, key: key, value: value, headers: headers(index)) { result in
                        switch result {
                        case .success(let report): reports.withLock { $0[index] = report }
                        case .failure(let error): failures.withLock { $0.append("\(index): \(error)") }
                        }
                    }
                    break
                } catch {
                    guard error.code == .queueFull else { throw TestSupportError("produce: \(error)") }
                }
                await producer.waitForQueueRoom()
            }
        }
        try await producer.flush(timeout: .seconds(60))
        await producer.close()
        let failed = failures.withLock { $0 }
        guard failed.isEmpty else { throw TestSupportError("jobs not produced: \(failed.prefix(3))") }
        return reports.withLock { reports in (0..<values.count).map { reports[$0]! } }
    }

    // MARK: The worker

    func startWorker(environment: [String: String] = [:]) throws -> WorkerProcess {
        try WorkerProcess(configPath: configPath, logDirectory: directory, environment: environment)
    }

    // MARK: Reading results

    /// Reads `topic` from the beginning with a fresh group until `done` holds for what was read.
    /// Each record is parsed once, as it arrives, and `done` is asked again only when new records
    /// came: re-parsing the whole topic every 200 ms took cores from the worker under test.
    func read(
        _ topic: String,
        timeout: Duration = .seconds(120),
        until done: @escaping @Sendable ([ReadRecord]) -> Bool
    ) async throws -> [ReadRecord] {
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: broker.bootstrapServers,
                groupID: "reader-\(UUID().uuidString.prefix(8))",
                topics: [topic],
                properties: broker.clientProperties.merging(["heartbeat.interval.ms": "500"]) { _, new in new }
            ),
            logger: logger
        )
        let read = Mutex<(records: [ReadRecord], asked: Int)>(([], -1))
        let reader = Task {
            for try await event in consumer.events {
                if case .records(let batch) = event {
                    let parsed = batch.map { ReadRecord(record: $0, object: json($0)) }
                    read.withLock { $0.records.append(contentsOf: parsed) }
                    for record in batch { consumer.complete(record.id) }
                }
            }
        }
        defer { reader.cancel() }
        do {
            try await waitUntil("records on \(topic)", timeout: timeout, interval: .milliseconds(200)) {
                let (records, fresh) = read.withLock { state in
                    let fresh = state.records.count != state.asked
                    state.asked = state.records.count
                    return (state.records, fresh)
                }
                return fresh ? done(records) : false
            }
        } catch {
            await consumer.close(drainTimeout: .zero)
            throw TestSupportError("\(error); read \(read.withLock { $0.records.count }) records so far")
        }
        await consumer.close(drainTimeout: .zero)
        return read.withLock { $0.records }
    }

    /// The worker group's committed offset per partition of the jobs topic (nil: none committed),
    /// asked without joining the group (joining would rebalance the workers).
    func committedOffsets(
        topic: String = jobsTopic,
        partitions count: Int = jobPartitions,
        groupSuffix: String = ""
    ) async throws -> [Int32: Int64?] {
        let partitions = (0..<Int32(count)).map { TopicPartition(topic: topic, partition: $0) }
        let (servers, group, logger) = (broker.bootstrapServers, groupID + groupSuffix, self.logger)
        let committed = try await offThePool {
            try KafkaConsumer.committedOffsets(bootstrapServers: servers, groupID: group, partitions: partitions, logger: logger)
        }
        return Dictionary(uniqueKeysWithValues: committed.map { ($0.key.partition, $0.value) })
    }

    /// Whether the committed offset of every partition is the end offset the producer reported.
    func everythingCommitted(_ reports: [DeliveryReport]) async throws -> (Bool, String) {
        var ends: [Int32: Int64] = [:]
        for report in reports { ends[report.partition] = max(ends[report.partition] ?? 0, report.offset + 1) }
        let committed = try await committedOffsets()
        let description = ends.keys.sorted().map { "p\($0): committed \(String(describing: committed[$0] ?? nil)) of \(ends[$0]!)" }.joined(
            separator: ", "
        )
        let all = ends.allSatisfy { partition, end in (committed[partition] ?? nil) == end }
        return (all, description)
    }

    // MARK: Metrics

    func scrape(_ path: String) async throws -> (Int, String) {
        try await HTTPGet.fetch(port: metricsPort.port, path: path)
    }
}

/// A record `Harness.read` returned, with its value parsed (once) as a JSON object.
/// `@unchecked Sendable`: the parsed object is built once and never changed.
struct ReadRecord: @unchecked Sendable {
    let record: KafkaRecord
    let object: [String: Any]

    var key: [UInt8]? { record.key }
    var value: [UInt8] { record.value }
    var headers: [KafkaHeader] { record.headers }
    var partition: Int32 { record.partition }
    var offset: Int64 { record.id.offset }
}

/// A read record's JSON object (parsed when it was read).
func json(_ record: ReadRecord) -> [String: Any] {
    record.object
}

/// Parses a record value as a JSON object.
func json(_ record: KafkaRecord) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(record.value)) as? [String: Any]) ?? [:]
}

/// A token for job `job`, index `index`: 64 hex characters.
func deviceToken(job: Int, index: Int) -> String {
    String(format: "%056x%08x", job, index)
}
