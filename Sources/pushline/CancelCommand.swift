import ArgumentParser
import Foundation
import Logging
import PushlineKafka
import PushlineWorker

struct CancelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Cancel a campaign or a job across every worker (or lift the cancel with --undo).",
        discussion: """
            Writes a cancel record to kafka.control_topic (default <jobs_topic>.control), keyed \
            campaign:<name> or job:<id>; every worker reads that topic whole. Within about a second no \
            worker sends another notification of the target: queued, held, paced or parked ones end with \
            status 0, reason "cancelled"; requests already on the wire finish; jobs of the target that \
            arrive later are finalised as cancelled without a request. A cancel holds for \
            worker.cancel_retention_ms after it was written (default 7 days). --undo writes a tombstone: \
            jobs that arrive from then on are sent (those already finalised stay cancelled).

            Exits 0 once Kafka acknowledged the record, 2 for bad arguments or configuration, 1 when \
            Kafka did not acknowledge it.

            Examples:
              pushline cancel --config pushline.yaml --campaign spring --reason "typo"
              pushline cancel --config pushline.yaml --job c42-17
              pushline cancel --config pushline.yaml --campaign spring --undo
            """
    )

    @Option(name: .long, help: "The YAML configuration file (only the kafka section is used).")
    var config: String?

    @Option(name: .long, help: "Cancel every job whose `campaign` is this (1 to 128 bytes).")
    var campaign: String?

    @Option(name: .long, help: "Cancel the job whose `id` is this (1 to 128 bytes).")
    var job: String?

    @Option(name: .long, help: "Why, for the workers' log lines (not with --undo).")
    var reason: String?

    @Flag(name: .long, help: "Lift the cancel instead (a tombstone): jobs that arrive from now on are sent.")
    var undo = false

    @Option(name: .long, help: "How long to wait for Kafka's acknowledgement, in seconds.")
    var timeout: Int = 30

    /// The one target named, checked by `validate()`.
    var target: CancelTarget {
        if let campaign { return .campaign(campaign) }
        return .job(job ?? "")
    }

    func validate() throws {
        switch (campaign, job) {
        case (nil, nil): throw ValidationError("name what to cancel: --campaign NAME or --job ID")
        case (.some, .some): throw ValidationError("--campaign and --job: give only one of them")
        default: break
        }
        let (flag, name) = campaign.map { ("--campaign", $0) } ?? ("--job", job ?? "")
        guard (1...128).contains(name.utf8.count) else {
            throw ValidationError("\(flag): must be 1 to 128 bytes, got \(name.utf8.count)")
        }
        if undo && reason != nil {
            throw ValidationError("--reason: not with --undo (a tombstone carries no text)")
        }
        guard timeout > 0 else { throw ValidationError("--timeout: must be at least 1 second") }
    }

    func run() async throws {
        let configuration = try await loadConfiguration(file: config, kafkaOnly: true)
        PushlineLogging.bootstrap(level: "warning", format: "auto")
        let logger = Logger(label: "pushline.cancel")
        var properties = Worker.producerProperties(configuration.kafka.properties)
        // A broker that does not answer fails the record within the wait, not librdkafka's 5 min.
        properties["message.timeout.ms"] = properties["message.timeout.ms"] ?? String(timeout * 1000)
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(bootstrapServers: configuration.kafka.brokers, properties: properties),
            logger: logger
        )
        let topic = configuration.kafka.controlTopicName
        let record = ControlRecord(
            target: target,
            cancel: undo ? nil : ControlRecord.Cancel(reason: reason, atMilliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        )
        // As a worker would, so that a cancel written before any worker ran finds the topic on a
        // cluster that creates none by itself; "already exists" (or no right to create) is fine.
        let retention = String(configuration.worker.cancelRetentionMilliseconds)
        let wait = timeout
        _ = await Task.detached {
            producer.createTopic(
                topic,
                partitions: 1,
                configs: ["cleanup.policy": "compact,delete", "retention.ms": retention],
                timeout: .seconds(min(wait, 10))
            )
        }.value
        let result = await Self.write(record, topic: topic, producer: producer)
        await producer.close(timeout: .seconds(5))
        var standardError = StandardError()
        switch result {
        case .success(let report):
            let written = report.timestampMilliseconds.map { " written_ms \($0)" } ?? ""
            print(
                "\(undo ? "lifted" : "cancelled") \(record.target.key): \(report.topic)[\(report.partition)] offset \(report.offset)\(written)"
            )
        case .failure(let error):
            print("cancel: \(record.target.key) not written to \(topic): \(error)", to: &standardError)
            throw ExitCode(1)
        }
    }

    /// Produces `record` and waits for Kafka's acknowledgement (or refusal).
    static func write(_ record: ControlRecord, topic: String, producer: KafkaProducer) async -> Result<DeliveryReport, KafkaError> {
        await withCheckedContinuation { continuation in
            let deliver: @Sendable (Result<DeliveryReport, KafkaError>) -> Void = { continuation.resume(returning: $0) }
            do throws(KafkaError) {
                if let value = record.value {
                    try producer.send(topic: topic, key: record.key, value: value, onDelivery: deliver)
                } else {
                    try producer.sendTombstone(topic: topic, key: record.key, onDelivery: deliver)
                }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
    }
}
