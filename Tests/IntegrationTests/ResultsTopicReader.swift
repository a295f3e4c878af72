import Foundation
import PushlineKafka
import PushlineTestSupport
import Synchronization

/// The whole results topic, read from its start in a consumer group of its own while a test runs:
/// the loop that hands each batch to a watcher (`ResultWatcher`, `CancelWatcher`) and completes
/// its records, and the consumer it runs on.
final class ResultsTopicReader: Sendable {
    private let consumer: KafkaConsumer
    private let loop = Mutex<Task<Void, any Error>?>(nil)

    /// A reader in the group `group` with a random suffix; nothing is read before `start`.
    init(_ harness: Harness, group: String) throws {
        consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: harness.broker.bootstrapServers,
                groupID: "\(group)-\(UUID().uuidString.prefix(8))",
                topics: [Harness.resultsTopic],
                properties: harness.broker.clientProperties
            ),
            logger: harness.logger
        )
    }

    /// Hands every batch read to `handle`, then completes its records; returns once the reader
    /// owns every partition of the results topic.
    func start(_ handle: @escaping @Sendable ([KafkaRecord]) -> Void) async throws {
        let consumer = self.consumer
        let task = Task {
            for try await event in consumer.events {
                guard case .records(let records) = event else { continue }
                handle(records)
                for record in records { consumer.complete(record.id) }
            }
        }
        loop.withLock { $0 = task }
        try await waitUntil("the watcher owns the results topic", timeout: .seconds(60)) { consumer.assignment.count == 4 }
    }

    func stop() async {
        await consumer.close(drainTimeout: .zero)
        _ = try? await loop.withLock { $0 }?.value
    }
}
