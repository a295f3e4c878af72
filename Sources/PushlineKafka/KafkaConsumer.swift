import Foundation
import Logging

/// A consumer-group member that hands out records and stores an offset only once every record
/// before it has been completed (at-least-once).
///
/// Records arrive through `events`; call `complete(_:)` with each record's `id` when its work is
/// acknowledged (any thread, any order). A dedicated thread polls librdkafka, stores offsets as the
/// contiguous completed prefix advances, and handles cooperative rebalances (see docs/kafka.md).
/// Call `close()` to leave the group cleanly.
public final class KafkaConsumer: Sendable {
    /// The consumer's events; iterate from one task.
    public let events: KafkaConsumerEvents
    /// The records of `configuration.priorityTopics`, apart from `events`' so that they never wait
    /// behind bulk records: only `.records`, ending when `events` ends. Iterate from a task of its
    /// own when priority topics are configured.
    public let priorityRecords: KafkaConsumerEvents
    private let core: ConsumerCore

    /// Creates the consumer, subscribes, and starts its poll thread.
    /// `onStatistics` gets librdkafka's statistics JSON every `statisticsInterval` (poll thread).
    /// `onRevoke` hears when a revoke with started records begins, and when it gives up on them
    /// (poll thread, inside the rebalance): the place to withdraw their work that cannot finish.
    /// `reader` reads each record in librdkafka's buffer, on the poll thread: the records it
    /// reads come without their bytes (`KafkaRecord.reading`).
    public init(
        configuration: KafkaConsumerConfiguration,
        logger: Logger,
        onStatistics: (@Sendable (String) -> Void)? = nil,
        onRevoke: (@Sendable (RevokeNotice) -> Void)? = nil,
        reader: (any KafkaRecordReader)? = nil
    ) throws(KafkaError) {
        let properties = try configuration.librdkafkaProperties()
        LibrdkafkaVersion.logRuntime(to: logger, client: "consumer")
        let client = try RDKafkaClient.makeConsumer(properties: properties, logger: logger, onStatistics: onStatistics)
        // One poll call serves records, rebalances, logs, errors and statistics.
        client.pollSetConsumer()
        try client.subscribe(topics: configuration.topics)
        let (stream, continuation) = AsyncThrowingStream<KafkaConsumerEvent, any Error>.makeStream()
        let (priorityStream, priorityContinuation) = AsyncThrowingStream<KafkaConsumerEvent, any Error>.makeStream()
        let core = ConsumerCore(
            client: client,
            configuration: configuration,
            logger: logger,
            continuation: continuation,
            priorityContinuation: priorityContinuation,
            onRevoke: onRevoke,
            reader: reader
        )
        self.core = core
        self.events = KafkaConsumerEvents(stream: stream, core: core, priority: false)
        self.priorityRecords = KafkaConsumerEvents(stream: priorityStream, core: core, priority: true)
        core.start()
    }

    /// Call before working on a delivered record: false when its partition is being revoked (or
    /// was) since delivery, and the record must be skipped; its partition's next owner gets it.
    /// A revoke, and `close`, wait only for started records: records delivered but not started
    /// are left to the next owner, not done twice. Thread-safe and cheap (one lock).
    public func start(_ id: RecordID) -> Bool {
        core.start(id)
    }

    /// `start(_:)` for the records of one batch, under one lock: element `i` says whether
    /// `ids[i]` started. An array, not any collection: a generic collection's elements would be
    /// read through its witnesses across the module boundary, which allocates per element.
    public func start(_ ids: [RecordID]) -> [Bool] {
        core.start(ids)
    }

    /// Marks a started record's work done, with its `weight` (what `uncommittedWeight` counts:
    /// the worker's notifications). Thread-safe and cheap (one lock, no I/O); the offset is stored
    /// by the poll thread. Ignored for records of partitions revoked since delivery.
    public func complete(_ id: RecordID, weight: Int = 1) {
        core.complete(id, weight: weight)
    }

    /// `complete(_:weight:)` for many records under one lock: each with its weight.
    public func complete(contentsOf records: [(id: RecordID, weight: Int)]) {
        core.complete(records)
    }

    /// Gives up a started record without completing it (its work was withdrawn): a revoke stops
    /// waiting for it, and its offset is never stored here, so the partition's next owner does it.
    /// `resumable`: what the caller keeps to do only the rest of the record's work, when part of
    /// it is done and in Kafka; if the record's assignment was lost and the partition comes back
    /// to this consumer unchanged, the record is delivered again with it (`KafkaRecord.resumed`).
    /// Thread-safe and cheap (one lock).
    public func abandon(_ id: RecordID, resumable: (any AnyObject & Sendable)? = nil) {
        core.abandon(id, resumable: resumable)
    }

    /// The weight of completed records whose offsets are not committed yet, on assigned
    /// partitions: with the started records' own, what a crash now would make the group redo.
    public var uncommittedWeight: Int { core.uncommittedWeight }

    /// What was kept of partitions whose assignment was lost did, since the start
    /// (`KafkaConsumerConfiguration.lostRetention`).
    public var lostWork: LostWorkCounts { core.lostWork }

    /// Pauses fetching on every assigned bulk partition (and those assigned later) until
    /// `resume()`; priority partitions keep fetching. Takes effect within `pollInterval`; the poll
    /// thread keeps polling, so the member stays alive.
    public func pause() {
        core.setUserPaused(true)
    }

    /// Resumes fetching after `pause()` (unless the event buffer is full).
    public func resume() {
        core.setUserPaused(false)
    }

    /// The committed offsets of group `groupID` for `partitions` (the next offset a member will
    /// read; nil for a partition with none), asked of the group coordinator by a client that does
    /// not join the group, so asking causes no rebalance. Blocks up to `timeout`: call it off the
    /// event loops.
    public static func committedOffsets(
        bootstrapServers: String,
        groupID: String,
        properties: [String: String] = [:],
        partitions: [TopicPartition],
        timeout: Duration = .seconds(10),
        logger: Logger
    ) throws(KafkaError) -> [TopicPartition: Int64?] {
        var all = properties
        all["bootstrap.servers"] = bootstrapServers
        all["group.id"] = groupID
        let client = try RDKafkaClient.makeConsumer(properties: all, logger: logger, onStatistics: nil)
        var result: [TopicPartition: Int64?] = [:]
        for (partition, offset) in try client.committed(partitions, timeout: timeout) {
            result[partition] = offset >= 0 ? offset : nil
        }
        return result
    }

    /// The partitions currently assigned to this member.
    public var assignment: [TopicPartition] { core.assignment }

    /// This member's id in the group and its last rebalance event (for the group watchdog).
    public var membership: KafkaMembership { core.membership }

    /// Whether Kafka does not answer this consumer now: no success (a commit, record or
    /// assignment) since its failures, the last of them within 15 s (`KafkaReachability`).
    public var kafkaUnreachable: Bool { core.client.callbacks.failingRecently(within: .seconds(15)) }

    /// Records delivered and not yet completed, over all assigned partitions.
    public var inFlightCount: Int { core.inFlightCount }

    /// Leaves the group cleanly: ends `events` at once, waits up to `drainTimeout` for in-flight
    /// records to be completed, stores and commits what completed, then closes (LeaveGroup).
    public func close(drainTimeout: Duration = .seconds(10)) async {
        await core.close(drainTimeout: drainTimeout)
    }

    deinit {
        core.requestClose(drainTimeout: .zero)
    }
}
