import PushlineKafka
import Logging

/// Produces result records and dead-letter copies, and reports each one's acknowledgement.
///
/// A record is never dropped: a full local queue or a failed delivery (broker down longer than
/// `message.timeout.ms`, leader changes, ...) is retried with backoff until Kafka acknowledges it,
/// because a job's offset must not be stored before its results are safe. The one exception is a
/// dead-letter copy too large for the broker: it is re-sent truncated, with a header saying so.
final class ResultPublisher: Sendable {
    private let producer: KafkaProducer
    private let logger: Logger
    private let metrics: WorkerMetrics

    /// The most bytes of a rejected record kept in a truncated dead-letter copy.
    static let truncatedDeadLetterBytes = 900_000

    init(producer: KafkaProducer, logger: Logger, metrics: WorkerMetrics) {
        self.producer = producer
        self.logger = logger
        self.metrics = metrics
    }

    struct Outgoing: Sendable {
        var topic: String
        var key: [UInt8]?
        var value: [UInt8]
        var headers: [KafkaHeader] = []
        var isDeadLetter = false
    }

    /// Sends `record`; `acknowledged` runs once, on the producer's poll thread (or a retry task),
    /// when Kafka has it.
    func publish(_ record: Outgoing, acknowledged: @escaping @Sendable () -> Void) {
        publish(record, attempt: 0, acknowledged: acknowledged)
    }

    private func publish(_ record: Outgoing, attempt: Int, acknowledged: @escaping @Sendable () -> Void) {
        do throws(KafkaError) {
            try producer.send(topic: record.topic, key: record.key, value: record.value, headers: record.headers) {
                [self] result in
                switch result {
                case .success:
                    acknowledged()
                case .failure(let error):
                    failed(record, error: error, attempt: attempt, acknowledged: acknowledged)
                }
            }
        } catch {
            failed(record, error: error, attempt: attempt, acknowledged: acknowledged)
        }
    }

    private func failed(_ record: Outgoing, error: KafkaError, attempt: Int, acknowledged: @escaping @Sendable () -> Void) {
        if record.isDeadLetter, error.code == .messageTooLarge, record.value.count > Self.truncatedDeadLetterBytes {
            var truncated = record
            truncated.value = Array(record.value.prefix(Self.truncatedDeadLetterBytes))
            truncated.headers.append(KafkaHeader(key: "pushline-truncated", value: Array(String(record.value.count).utf8)))
            logger.warning(
                "dead-letter copy too large for the broker; sending it truncated",
                metadata: ["topic": "\(record.topic)", "bytes": "\(record.value.count)"])
            publish(truncated, attempt: attempt + 1, acknowledged: acknowledged)
            return
        }
        if error.code != .queueFull {
            metrics.produceRetried()
            if attempt % 20 == 0 {
                logger.warning(
                    "result record not acknowledged; retrying until it is",
                    metadata: ["topic": "\(record.topic)", "error": "\(error)", "attempt": "\(attempt + 1)"])
            }
        }
        let delay: Duration = error.code == .queueFull ? .milliseconds(1) : .milliseconds(min(5000, 50 << min(attempt, 7)))
        Task {
            try? await Task.sleep(for: delay)
            self.publish(record, attempt: attempt + 1, acknowledged: acknowledged)
        }
    }

    /// Waits for every record handed over so far, up to `timeout`.
    func flush(timeout: Duration) async throws {
        try await producer.flush(timeout: timeout)
    }

    var queueDepth: Int { producer.outstandingCount }
}
