import Foundation
import Logging

/// Reads every partition of one topic from its beginning, outside any consumer group (no
/// membership, no commits), then follows it: each record is handed to `onRecord`, in each
/// partition's order, on the follower's own thread.
///
/// Made for small compacted topics every member of a fleet reads whole (the worker's control
/// topic). The topic is looked up first; a missing one is created when the configuration says how
/// (`creation`), else waited for, with a warning; one whose creation the broker refuses holds
/// nobody up (`isCaughtUp`: there is nothing in it) and is read once it appears. Partitions added
/// to the topic after it was found are not read.
public final class KafkaTopicFollower: Sendable {
    private let core: TopicFollowerCore

    /// Creates the client and starts the thread that finds the topic and reads it.
    public init(
        configuration: KafkaTopicFollowerConfiguration,
        logger: Logger,
        onRecord: @escaping @Sendable (KafkaRecord) -> Void
    ) throws(KafkaError) {
        let client = try RDKafkaClient.makeConsumer(properties: configuration.librdkafkaProperties, logger: logger, onStatistics: nil)
        // One poll call serves records, logs and errors.
        client.pollSetConsumer()
        core = TopicFollowerCore(client: client, configuration: configuration, logger: logger, onRecord: onRecord)
        core.start()
    }

    /// Whether every record that was in the topic when the follower found it has been handed out.
    public var isCaughtUp: Bool { core.isCaughtUp }

    /// Blocks until `isCaughtUp` or `timeout` passed (or the follower stopped); returns `isCaughtUp`.
    public func waitUntilCaughtUp(timeout: Duration) -> Bool {
        core.waitUntilCaughtUp(timeout: timeout)
    }

    /// Stops reading and waits for the thread to end (within a poll interval). Idempotent.
    public func stop() {
        core.stop()
    }

    /// Asks the thread to stop without waiting for it; `waitUntilCaughtUp` returns at once.
    public func requestStop() {
        core.requestStop()
    }

    /// Whether a stop was asked for (or the thread ended).
    public var isStopping: Bool { core.isStopping }

    deinit {
        core.requestStop()
    }
}
