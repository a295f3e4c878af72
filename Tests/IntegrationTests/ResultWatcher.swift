import Foundation
import PushlineKafka
import PushlineTestSupport
import Synchronization

/// Reads the results topic from its start while a test runs, noting when each job's first
/// delivery record was read.
final class ResultWatcher: Sendable {
    private let consumer: KafkaConsumer
    private let state = Mutex<
        (seen: [String: ContinuousClock.Instant], counts: [String: Int], statuses: [String: Int], perToken: [String: Int])
    >(
        ([:], [:], [:], [:])
    )
    private let loop = Mutex<Task<Void, any Error>?>(nil)

    static func start(_ harness: Harness) async throws -> ResultWatcher {
        let consumer = try resultsConsumer(harness, group: "watcher")
        let watcher = ResultWatcher(consumer: consumer)
        watcher.begin()
        try await waitUntilOwned(consumer)
        return watcher
    }

    /// A consumer of the whole results topic in a group of its own (`group` and a random suffix),
    /// for a watcher that reads it while a test runs.
    static func resultsConsumer(_ harness: Harness, group: String) throws -> KafkaConsumer {
        try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: harness.broker.bootstrapServers,
                groupID: "\(group)-\(UUID().uuidString.prefix(8))",
                topics: [Harness.resultsTopic],
                properties: harness.broker.clientProperties
            ),
            logger: harness.logger
        )
    }

    /// Waits until a watcher's consumer (already reading its events) owns every partition of
    /// the results topic.
    static func waitUntilOwned(_ consumer: KafkaConsumer) async throws {
        try await waitUntil("the watcher owns the results topic", timeout: .seconds(60)) { consumer.assignment.count == 4 }
    }

    private init(consumer: KafkaConsumer) {
        self.consumer = consumer
    }

    private func begin() {
        let consumer = self.consumer
        let task = Task { [self] in
            for try await event in consumer.events {
                guard case .records(let records) = event else { continue }
                let now = ContinuousClock.now
                var jobs: [(String, Int, String)] = []
                for record in records {
                    let object = json(record)
                    if object["type"] as? String == "delivery", let job = object["job_id"] as? String {
                        let recipient = object["token"] as? String ?? object["channel_id"] as? String ?? ""
                        jobs.append((job, object["status"] as? Int ?? -1, recipient))
                    }
                    consumer.complete(record.id)
                }
                self.state.withLock { state in
                    for (job, status, recipient) in jobs {
                        state.perToken[job + "/" + recipient, default: 0] += 1
                        if state.seen[job] == nil {
                            state.seen[job] = now
                            state.statuses[job] = status
                        }
                        state.counts[String(job.prefix { $0 != "-" }), default: 0] += 1
                    }
                }
            }
        }
        loop.withLock { $0 = task }
    }

    /// Delivery records read for jobs whose id starts with `prefix` ("bulk-", "urgent-").
    func deliveries(prefix: String) -> Int {
        state.withLock { $0.counts[String(prefix.dropLast()), default: 0] }
    }

    var firstSeen: [String: ContinuousClock.Instant] { state.withLock { $0.seen } }

    /// Distinct (job, token) pairs with a delivery record, and the records beyond one per pair.
    var deliveredTokens: (distinct: Int, duplicates: Int) {
        state.withLock { state in
            (state.perToken.count, state.perToken.values.reduce(0) { $0 + $1 - 1 })
        }
    }

    /// The status of each job's first delivery record read.
    var statuses: [String: Int] { state.withLock { $0.statuses } }

    func stop() async {
        await consumer.close(drainTimeout: .zero)
        _ = try? await loop.withLock { $0 }?.value
    }
}
