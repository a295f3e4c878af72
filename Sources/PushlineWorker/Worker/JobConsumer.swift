import Logging
import PushlineKafka
import ServiceLifecycle

/// The worker's member of the consumer group, as a Service. Its graceful shutdown comes after
/// the pipeline's drain: it then stores and commits the contiguous completed prefix and leaves the
/// group at once. Records not completed by then (fetched but not started, unfinished, held) stay
/// uncommitted and go to the partition's next owner.
final class JobConsumer: Service, Sendable {
    let consumer: KafkaConsumer
    private let gate: InflightGate
    private let logger: Logger

    init(consumer: KafkaConsumer, gate: InflightGate, logger: Logger) {
        self.consumer = consumer
        self.gate = gate
        self.logger = logger
    }

    func run() async throws {
        // Cancellation (another service failed) ends the wait too: the consumer closes either way.
        try? await gracefulShutdown()
        await consumer.close(drainTimeout: .zero)
        logger.info("consumer closed; offsets of finished work committed", metadata: ["in_flight_left": "\(gate.count)"])
    }
}
