import Foundation
import PushlineKafka
import PushlineTestSupport
import Synchronization

/// Reads the results topic from its start while a test runs, noting when each job's first
/// delivery record was read.
final class ResultWatcher: Sendable {
    private let reader: ResultsTopicReader
    private let state = Mutex<
        (seen: [String: ContinuousClock.Instant], counts: [String: Int], statuses: [String: Int], perToken: [String: Int])
    >(
        ([:], [:], [:], [:])
    )

    static func start(_ harness: Harness) async throws -> ResultWatcher {
        let watcher = ResultWatcher(reader: try ResultsTopicReader(harness, group: "watcher"))
        try await watcher.reader.start { [watcher] records in watcher.note(records) }
        return watcher
    }

    private init(reader: ResultsTopicReader) {
        self.reader = reader
    }

    private func note(_ records: [KafkaRecord]) {
        let now = ContinuousClock.now
        var jobs: [(String, Int, String)] = []
        for record in records {
            let object = json(record)
            if object["type"] as? String == "delivery", let job = object["job_id"] as? String {
                let recipient = object["token"] as? String ?? object["channel_id"] as? String ?? ""
                jobs.append((job, object["status"] as? Int ?? -1, recipient))
            }
        }
        state.withLock { state in
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
        await reader.stop()
    }
}
