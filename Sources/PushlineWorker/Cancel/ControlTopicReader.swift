import Foundation
import Logging
import Metrics
import PushlineKafka
import ServiceLifecycle

/// Every worker's reader of the control topic (`kafka.control_topic`), as a Service: reads the
/// whole topic outside the consumer group (from the beginning at boot, then following it, polled
/// every 100 ms) and turns each record into a `CancelChange` for `apply`, in the topic's order.
///
/// Made in `Worker.services()` before the jobs consumer, which is made only once the reader has
/// applied every cancel already in the topic (or after 10 s, with a warning: `waitForBoot`), so a cancel
/// written before its jobs arrive holds for them. Creates the topic when it is missing
/// (compacted, `retention.ms` = the cancel retention), else waits for it with a warning.
final class ControlTopicReader: Service, Sendable {
    private let follower: KafkaTopicFollower
    private let topic: String
    private let logger: Logger

    init(
        kafka: PushlineConfiguration.Kafka,
        retentionMilliseconds: Int,
        logger: Logger,
        apply: @escaping @Sendable (CancelChange) -> Void
    ) throws(KafkaError) {
        let topic = kafka.controlTopicName
        self.topic = topic
        self.logger = logger
        let retention = Int64(retentionMilliseconds)
        follower = try KafkaTopicFollower(
            configuration: KafkaTopicFollowerConfiguration(
                bootstrapServers: kafka.brokers,
                topic: topic,
                properties: kafka.properties,
                creation: .init(partitions: 1, configs: ["cleanup.policy": "compact,delete", "retention.ms": String(retention)])
            ),
            logger: logger,
            onRecord: { record in
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                guard let change = Self.change(of: record, retentionMilliseconds: retention, nowMilliseconds: now, logger: logger)
                else { return }
                apply(change)
            }
        )
    }

    /// Blocks until every cancel already in the topic was applied, up to `timeout`; logs a warning
    /// when the topic could not be read in time (cancels then apply as they are read).
    func waitForBoot(timeout: Duration) {
        if follower.waitUntilCaughtUp(timeout: timeout) {
            logger.info("control topic read; cancels in force applied", metadata: ["topic": "\(topic)"])
        } else {
            logger.warning(
                "control topic not read; jobs flow, its cancels apply as they are read",
                metadata: ["topic": "\(topic)"]
            )
        }
    }

    func run() async throws {
        // Cancellation (another service failed) ends the wait too.
        try? await gracefulShutdown()
        follower.stop()
    }

    /// The change `record` makes at `nowMilliseconds`: nil for a malformed record (logged, a
    /// warning), or a cancel that expired (its timestamp + the retention is past; logged). The
    /// registry logs the changes it applies.
    static func change(of record: KafkaRecord, retentionMilliseconds: Int64, nowMilliseconds: Int64, logger: Logger) -> CancelChange? {
        let change = read(record, retentionMilliseconds: retentionMilliseconds, nowMilliseconds: nowMilliseconds, logger: logger)
        Counter(label: "pushline_control_records_total", dimensions: [("kind", change.kind)]).increment()
        return change.change
    }

    /// `change(of:...)`, with what the record was for the metric: cancel, lift, expired, malformed.
    private static func read(
        _ record: KafkaRecord,
        retentionMilliseconds: Int64,
        nowMilliseconds: Int64,
        logger: Logger
    ) -> (change: CancelChange?, kind: String) {
        let place: Logger.Metadata = ["partition": "\(record.partition)", "offset": "\(record.offset)"]
        let parsed: ControlRecord
        do {
            parsed = try ControlRecord(key: record.keyBytes, value: record.valueBytes)
        } catch {
            logger.warning("control record skipped: \(error)", metadata: place)
            return (nil, "malformed")
        }
        let written = record.timestampMilliseconds ?? nowMilliseconds
        guard
            let change = parsed.change(
                timestampMilliseconds: written,
                retentionMilliseconds: retentionMilliseconds,
                nowMilliseconds: nowMilliseconds
            )
        else {
            logger.info(
                "cancel expired; ignored",
                metadata: place.merging(["target": "\(parsed.target.key)", "written_at": "\(written)"]) { $1 }
            )
            return (nil, "expired")
        }
        // `Cancellations.apply` logs the cancel or lift (one line each).
        if case .lift = change { return (change, "lift") }
        return (change, "cancel")
    }
}
