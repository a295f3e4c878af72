import Foundation
import Logging

/// `KafkaTopicFollower`'s thread: finds (or creates) the topic, assigns every partition from the
/// beginning, polls, and says when it has read up to where each partition ended when it began.
///
/// Threading: librdkafka is called only from the follower's thread; `state` (where the follower
/// is, a `TopicFollowerState`) is guarded by `condition`.
final class TopicFollowerCore: @unchecked Sendable {
    // @unchecked Sendable: the `let`s are immutable; the mutable state is guarded by `condition`.
    private let client: RDKafkaClient
    private let configuration: KafkaTopicFollowerConfiguration
    private let logger: Logger
    private let onRecord: @Sendable (KafkaRecord) -> Void
    private let condition = NSCondition()
    private var state = TopicFollowerState.finding(stopping: false)

    init(
        client: RDKafkaClient,
        configuration: KafkaTopicFollowerConfiguration,
        logger: Logger,
        onRecord: @escaping @Sendable (KafkaRecord) -> Void
    ) {
        self.client = client
        self.configuration = configuration
        self.logger = logger
        self.onRecord = onRecord
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "kafka-follower"
        thread.start()
    }

    var isCaughtUp: Bool {
        condition.lock()
        defer { condition.unlock() }
        return state.isCaughtUp
    }

    func waitUntilCaughtUp(timeout: Duration) -> Bool {
        let deadline = Date().addingTimeInterval(Double(timeout.milliseconds) / 1000)
        condition.lock()
        defer { condition.unlock() }
        while !state.waitIsOver && condition.wait(until: deadline) {}
        return state.isCaughtUp
    }

    func requestStop() {
        condition.lock()
        state.requestStop()
        condition.broadcast()
        condition.unlock()
    }

    func stop() {
        requestStop()
        condition.lock()
        while !state.isFinished { condition.wait() }
        condition.unlock()
    }

    var isStopping: Bool {
        condition.lock()
        defer { condition.unlock() }
        return state.isStopping
    }

    /// Waits up to `interval` unless stopped; returns false once stopping.
    private func pause(_ interval: Duration) -> Bool {
        let deadline = Date().addingTimeInterval(Double(interval.milliseconds) / 1000)
        condition.lock()
        defer { condition.unlock() }
        while !state.isStopping && condition.wait(until: deadline) {}
        return !state.isStopping
    }

    private func run() {
        defer {
            condition.lock()
            state.finish()
            condition.broadcast()
            condition.unlock()
        }
        guard let count = findTopic() else { return }
        let topic = configuration.topic
        if let error = client.assignFromBeginning(topic, count: count) {
            logger.error("cannot read topic", metadata: ["topic": "\(topic)", "error": "\(error)"])
            return
        }
        logger.info("reading topic from the beginning", metadata: ["topic": "\(topic)", "partitions": "\(count)"])
        condition.lock()
        state.found(partitions: count)
        condition.unlock()
        follow()
        client.unassignAll()
    }

    /// The topic's partition count, once it exists; nil when stopped first. The topic is looked
    /// up first and created (when configured) only when it is missing, so a worker that may not
    /// create topics, or whose create would go unanswered, never waits for that. When the broker
    /// refuses the create (an answer, not a timeout), the follower says so once and counts as
    /// caught up (`absent`: there is nothing to read), and goes on looking for the topic.
    private func findTopic() -> Int32? {
        let topic = configuration.topic
        var warned = false
        var refused = false
        while !isStopping {
            var next = configuration.retryInterval
            do {
                if let count = try client.partitionCount(of: topic, timeout: .seconds(10)) { return count }
                if let creation = configuration.creation, !refused {
                    switch client.createTopic(topic, partitions: creation.partitions, configs: creation.configs, timeout: .seconds(10)) {
                    case nil:
                        logger.info(
                            "topic created",
                            metadata: [
                                "topic": "\(topic)",
                                "configs": "\(creation.configs.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " "))",
                            ]
                        )
                        next = .milliseconds(100)
                    case let error? where error.code == .topicAlreadyExists:
                        next = .milliseconds(100)
                    case let error? where !KafkaError.Code.retriable.contains(error.code):
                        refused = true
                        logger.warning(
                            "topic missing, and creating it was refused: starting without it; it is read from its beginning once it exists",
                            metadata: ["topic": "\(topic)", "error": "\(error)"]
                        )
                        condition.lock()
                        state.absent()
                        condition.broadcast()
                        condition.unlock()
                    case let error?:
                        if !warned {
                            logger.warning("cannot create topic; retrying", metadata: ["topic": "\(topic)", "error": "\(error)"])
                        }
                    }
                } else if !warned, !refused {
                    logger.warning("topic missing; waiting for it", metadata: ["topic": "\(topic)"])
                }
            } catch {
                if !warned { logger.warning("cannot read topic metadata; retrying", metadata: ["topic": "\(topic)", "error": "\(error)"]) }
            }
            if next == configuration.retryInterval { warned = true }
            guard pause(next) else { return nil }
        }
        return nil
    }

    private func follow() {
        var topicNames = RDKafkaTopicNames()
        let timeout = Int32(clamping: configuration.pollInterval.milliseconds)
        while !isStopping {
            client.pollFollowed(
                upTo: 1000,
                timeout: timeout,
                topicNames: &topicNames,
                record: onRecord,
                end: { partition in
                    condition.lock()
                    if state.ended(partition) { condition.broadcast() }
                    condition.unlock()
                },
                error: { error in
                    logger.warning(
                        "topic read error; librdkafka retries",
                        metadata: ["topic": "\(configuration.topic)", "error": "\(error)"]
                    )
                }
            )
        }
    }
}
