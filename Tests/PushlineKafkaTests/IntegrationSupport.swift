import Logging
import PushlineKafka
import PushlineTestSupport
import Synchronization

/// Shared setup for tests against the embedded broker.
enum Integration {
    static var logger: Logger {
        var logger = Logger(label: "kafka-test")
        logger.logLevel = .warning
        return logger
    }

    static func consumerConfiguration(
        _ broker: EmbeddedBroker,
        group: String,
        topic: String,
        drain: Duration = .seconds(10)
    ) -> KafkaConsumerConfiguration {
        KafkaConsumerConfiguration(
            bootstrapServers: broker.bootstrapServers,
            groupID: group,
            topics: [topic],
            properties: broker.clientProperties,
            revokeDrainTimeout: drain,
            maxBatchSize: 500,
            // The embedded broker's guards, as the worker sets them with kafka.guard_join_rounds
            // on the test stack's 6 s session (docs/kafka.md, "Broker guards").
            closeJoinWait: .seconds(11),
            stalledJoinLimit: .seconds(12) + drain
        )
    }

    /// Produces `count` records (key and value = the index), returns the end offset per partition
    /// from the delivery reports (the embedded broker's watermarks are not reliable).
    static func produce(
        _ broker: EmbeddedBroker,
        topic: String,
        count: Int,
        partitions: [Int32]? = nil
    ) async throws -> [Int32: Int64] {
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(bootstrapServers: broker.bootstrapServers),
            logger: logger
        )
        let reports = Mutex<[Result<DeliveryReport, KafkaError>]>([])
        let targets: [Int32?] = partitions ?? Array(repeating: nil, count: count)
        for (index, partition) in targets.enumerated() {
            let bytes = Array(String(index).utf8)
            try producer.send(
                topic: topic,
                partition: partition,
                key: bytes,
                value: bytes,
                headers: [KafkaHeader(key: "index", value: bytes)]
            ) { result in reports.withLock { $0.append(result) } }
        }
        try await producer.flush(timeout: .seconds(60))
        await producer.close()
        let all = reports.withLock { $0 }
        var ends: [Int32: Int64] = [:]
        for result in all {
            let report = try result.get()
            ends[report.partition] = max(ends[report.partition] ?? 0, report.offset + 1)
        }
        guard all.count == targets.count else { throw TestSupportError("\(all.count) of \(targets.count) delivery reports") }
        return ends
    }
}

/// Runs a consumer's event loop in a task, records what it saw, and completes records according
/// to `shouldComplete` (in shuffled order within each batch: out-of-order completion).
final class ConsumerProbe: Sendable {
    struct Seen: Sendable {
        var records: [KafkaRecord] = []
        var assigned: Set<TopicPartition> = []
        var revoked: [TopicPartition] = []
        var held: [RecordID] = []
    }

    let consumer: KafkaConsumer
    let seen = Locked(Seen())
    private let loop = Locked<Task<Void, any Error>?>(nil)

    init(
        _ configuration: KafkaConsumerConfiguration,
        seed: UInt64 = 1,
        shouldComplete: @escaping @Sendable (KafkaRecord) -> Bool = { _ in true },
        onStatistics: (@Sendable (String) -> Void)? = nil,
        reader: (any KafkaRecordReader)? = nil
    ) throws {
        let consumer = try KafkaConsumer(
            configuration: configuration,
            logger: Integration.logger,
            onStatistics: onStatistics,
            reader: reader
        )
        self.consumer = consumer
        let seen = self.seen
        let task = Task {
            var random = SeededGenerator(seed: seed)
            for try await event in consumer.events {
                switch event {
                case .records(let records):
                    var held: [RecordID] = []
                    for record in records.shuffled(using: &random) {
                        guard consumer.start(record.id) else { continue }
                        if shouldComplete(record) { consumer.complete(record.id) } else { held.append(record.id) }
                    }
                    seen.withLock {
                        $0.records.append(contentsOf: records)
                        $0.held.append(contentsOf: held)
                    }
                case .assigned(let partitions):
                    seen.withLock { $0.assigned.formUnion(partitions) }
                case .revoked(let partitions):
                    seen.withLock {
                        $0.assigned.subtract(partitions)
                        $0.revoked.append(contentsOf: partitions)
                    }
                }
            }
        }
        loop.withLock { $0 = task }
    }

    var recordCount: Int { seen.withLock { $0.records.count } }

    /// Whether this member saw `offset` of `partition`.
    func saw(_ partition: Int32, _ offset: Int64) -> Bool {
        seen.withLock { $0.records.contains { $0.partition == partition && $0.offset == offset } }
    }
    var assigned: Set<TopicPartition> { seen.withLock { $0.assigned } }

    /// The lowest offset seen per partition.
    var firstOffsets: [Int32: Int64] {
        seen.withLock { Dictionary($0.records.map { ($0.partition, $0.offset) }, uniquingKeysWith: min) }
    }

    func close(drainTimeout: Duration = .seconds(2)) async throws {
        await consumer.close(drainTimeout: drainTimeout)
        let task = loop.withLock { $0 }
        try await task?.value
    }
}

/// A `Mutex` in a class, so closures can share it.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}
