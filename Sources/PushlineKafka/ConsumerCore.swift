import CRdKafka
import Foundation
import Logging

/// The consumer's engine: the poll thread, the offset bookkeeping shared with `complete`, and the
/// rebalance handling (ConsumerCore+Rebalance.swift).
///
/// Threading: librdkafka is called only from the poll thread (run loop, rebalance callback,
/// close); other threads only touch the state guarded by `condition`.
final class ConsumerCore: @unchecked Sendable {
    // @unchecked Sendable: the `let`s are immutable (the continuation is Sendable); the fields marked
    // "guarded" are read and written only with `condition` locked; the fields marked "poll thread"
    // are touched only by the poll thread: run() and the rebalance callback, which librdkafka
    // invokes from inside that thread's rd_kafka_consumer_poll/rd_kafka_consumer_close calls.
    let client: RDKafkaClient
    let configuration: KafkaConsumerConfiguration
    let logger: Logger
    let continuation: AsyncThrowingStream<KafkaConsumerEvent, any Error>.Continuation
    /// The priority lane's records (`configuration.priorityTopics`); finished with `continuation`.
    let priorityContinuation: AsyncThrowingStream<KafkaConsumerEvent, any Error>.Continuation
    let condition = NSCondition()
    /// Where the bulk partitions' records wait until the buffer has room; the consumer queue
    /// keeps rebalances, logs and the priority partitions' records, and is polled in every state.
    let bulkQueue: RDKafkaQueue
    /// Told when a revoke begins and when it gives up on started records (poll thread).
    let onRevoke: (@Sendable (RevokeNotice) -> Void)?

    // Guarded by `condition`.
    var assignments = AssignmentState()
    /// The last rebalance event this member saw ("assigned 4", "revoked 4", "lost 4") and when.
    var lastRebalance: (event: String, at: ContinuousClock.Instant)?
    var drainWaiting = false
    private var userPaused = false
    /// The consumer queue, to wake a poll that waits while the bulk buffer is full; nil once
    /// closing (librdkafka wants this reference gone before `rd_kafka_consumer_close`).
    private var consumerQueue: OpaquePointer?
    /// Whether the poll thread found the bulk buffer full and may be waiting in a poll.
    private var bufferWaiting = false
    /// Records yielded and not yet read, per lane.
    private var buffered = 0
    private var bufferedPriority = 0
    /// Since when a lane's buffer has been full (pausing comes only after `fullPauseAfter`).
    private var fullSince: ContinuousClock.Instant?
    private var priorityFullSince: ContinuousClock.Instant?
    /// A buffer full this long pauses its lane's partitions. Pausing purges librdkafka's
    /// prefetched messages (they are fetched again on resume), so a reader that is merely a
    /// little behind is waited for instead (the bulk queue simply keeps its records meanwhile).
    private let fullPauseAfter: Duration = .seconds(1)
    private var closeDeadline: ContinuousClock.Instant?
    private var closed = false
    private var closeWaiters: [CheckedContinuation<Void, Never>] = []

    // Poll thread only.
    var fetchPaused = false
    var priorityFetchPaused = false
    var closing = false
    var failed = false
    var closeDrainDeadline = ContinuousClock.now
    /// This member's JoinGroup may be pending at the coordinator: from the subscription to the
    /// first assignment, and from every revoke (after which librdkafka rejoins) to the next.
    var joinPending = true
    /// When to abandon a join the coordinator does not answer (`configuration.stalledJoinLimit`).
    var stalledJoin: StalledJoin
    private var pending: [CopiedMessage] = []
    private var topicNames = RDKafkaTopicNames()
    /// The bulk queue had nothing at the last look.
    private var bulkIdle = false
    /// Offsets stored since the last commit, and when that commit was.
    private var uncommitted: [TopicPartition: Int64] = [:]
    private var lastCommit = ContinuousClock.now

    init(
        client: RDKafkaClient,
        configuration: KafkaConsumerConfiguration,
        logger: Logger,
        continuation: AsyncThrowingStream<KafkaConsumerEvent, any Error>.Continuation,
        priorityContinuation: AsyncThrowingStream<KafkaConsumerEvent, any Error>.Continuation,
        onRevoke: (@Sendable (RevokeNotice) -> Void)? = nil
    ) {
        self.onRevoke = onRevoke
        self.client = client
        self.configuration = configuration
        self.logger = logger
        self.continuation = continuation
        self.priorityContinuation = priorityContinuation
        self.bulkQueue = RDKafkaQueue(client: client)
        self.consumerQueue = rd_kafka_queue_get_consumer(client.handle)
        // The consumer protocol (KIP-848) has no join rounds to stall.
        self.stalledJoin = StalledJoin(bound: configuration.usesConsumerGroupProtocol ? .zero : configuration.stalledJoinLimit)
    }

    func start() {
        // Written before Thread.start, read only on the new thread: see RDKafkaCallbacks.
        client.callbacks.rebalanceHandler = self
        client.callbacks.commitHandler = self
        let thread = Thread { [self] in run() }
        thread.name = "kafka-consumer"
        thread.start()
    }

    func isPriority(_ topic: String) -> Bool {
        configuration.priorityTopics.contains(topic)
    }

    // MARK: - Called from any thread

    func start(_ id: RecordID) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return assignments.start(id)
    }

    func start(_ ids: some Collection<RecordID>) -> [Bool] {
        condition.lock()
        defer { condition.unlock() }
        return ids.map { assignments.start($0) }
    }

    func complete(_ id: RecordID, weight: Int) {
        condition.lock()
        _ = assignments.complete(id, weight: weight)
        if drainWaiting { condition.broadcast() }
        condition.unlock()
    }

    func abandon(_ id: RecordID) {
        condition.lock()
        assignments.abandon(id)
        if drainWaiting { condition.broadcast() }
        condition.unlock()
    }

    var uncommittedWeight: Int {
        condition.lock()
        defer { condition.unlock() }
        return assignments.uncommittedWeight
    }

    func delivered(_ count: Int, priority: Bool) {
        condition.lock()
        if priority {
            bufferedPriority -= count
        } else {
            buffered -= count
            if bufferWaiting, let consumerQueue {
                // Room again: the poll thread should not sit out its poll timeout.
                bufferWaiting = false
                rd_kafka_queue_yield(consumerQueue)
            }
        }
        condition.unlock()
    }

    func setUserPaused(_ paused: Bool) {
        condition.lock()
        userPaused = paused
        condition.unlock()
    }

    var assignment: [TopicPartition] {
        condition.lock()
        defer { condition.unlock() }
        return assignments.assigned
    }

    /// This member's id in the group (nil before it joined), and its last rebalance event.
    var membership: KafkaMembership {
        var memberID: String?
        if let pointer = rd_kafka_memberid(client.handle) {
            memberID = String(cString: pointer)
            rd_kafka_mem_free(client.handle, pointer)
        }
        condition.lock()
        defer { condition.unlock() }
        return KafkaMembership(
            memberID: memberID?.isEmpty == false ? memberID : nil,
            lastRebalance: lastRebalance?.event,
            sinceLastRebalance: lastRebalance.map { .now - $0.at }
        )
    }

    var inFlightCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return assignments.inFlight()
    }

    func requestClose(drainTimeout: Duration) {
        condition.lock()
        if closeDeadline == nil { closeDeadline = .now + drainTimeout }
        condition.unlock()
    }

    func close(drainTimeout: Duration) async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            condition.lock()
            if closed {
                condition.unlock()
                waiter.resume()
                return
            }
            closeWaiters.append(waiter)
            if closeDeadline == nil { closeDeadline = .now + drainTimeout }
            condition.unlock()
        }
    }

    // MARK: - Poll thread

    private func run() {
        let pollMilliseconds = Int32(clamping: configuration.pollInterval.milliseconds)
        while true {
            condition.lock()
            let room = configuration.maxBufferedRecords - buffered
            bufferWaiting = room <= 0
            let now = ContinuousClock.now
            fullSince = room <= 0 ? (fullSince ?? now) : nil
            priorityFullSince = bufferedPriority >= configuration.maxBufferedRecords ? (priorityFullSince ?? now) : nil
            let wantPaused = userPaused || fullSince.map { now - $0 >= fullPauseAfter } ?? false
            let wantPriorityPaused = priorityFullSince.map { now - $0 >= fullPauseAfter } ?? false
            let closeAt = closeDeadline
            let owned = assignments.assignedCount
            let started = joinPending ? assignments.started() : 0
            condition.unlock()
            if let closeAt {
                runClose(deadline: closeAt)
                return
            }
            if let fatal = client.fatalError() {
                failed = true
                continuation.finish(throwing: fatal)
                priorityContinuation.finish()
                runClose(deadline: .now)
                return
            }
            rejoinIfStalled(now: now, owned: owned, started: started)
            if wantPaused != fetchPaused { setFetchPaused(wantPaused, priority: false) }
            if wantPriorityPaused != priorityFetchPaused { setFetchPaused(wantPriorityPaused, priority: true) }
            storeCompletedOffsets()
            if !uncommitted.isEmpty, now - lastCommit >= configuration.commitInterval {
                commitInBackground()
            }
            // Bulk records only while the buffer has room; the consumer queue (rebalances, logs,
            // priority records) in every state. One of the two may wait, up to `pollInterval`:
            // the bulk queue when it had nothing last time and there is room (a bulk record then
            // wakes the thread at once; the consumer queue waits at most that long), else the
            // consumer queue (a reader freeing room wakes it: `delivered` yields it).
            var took = 0
            if room > 0 {
                took = bulkQueue.consume(upTo: min(room, configuration.maxBatchSize), timeout: bulkIdle ? pollMilliseconds : 0) {
                    message in take(message)
                }
                bulkIdle = took == 0
            }
            pollBatch(timeout: room > 0 ? 0 : pollMilliseconds)
        }
    }

    /// Polls the consumer queue: up to `maxBatchSize` messages (blocking only for the first),
    /// serving rebalances and logs on the way, and delivers what was fetched.
    func pollBatch(timeout: Int32) {
        var timeout = timeout
        while pending.count < configuration.maxBatchSize {
            guard let message = rd_kafka_consumer_poll(client.handle, timeout) else { break }
            timeout = 0
            take(message)
            // Destroy at once: a held message pins its whole fetch buffer.
            rd_kafka_message_destroy(message)
        }
        flushPending()
    }

    private func take(_ message: UnsafeMutablePointer<rd_kafka_message_t>) {
        if message.pointee.err == RD_KAFKA_RESP_ERR_NO_ERROR {
            pending.append(CopiedMessage(copying: message, topicNames: &topicNames))
        } else {
            logMessageError(message)
        }
    }

    /// Takes copied messages into the assignment state and yields them. Also called at the start
    /// of every rebalance, so messages fetched under an assignment are taken under it.
    func flushPending() {
        guard !pending.isEmpty else { return }
        var records: [KafkaRecord] = []
        var priorityRecords: [KafkaRecord] = []
        records.reserveCapacity(pending.count)
        condition.lock()
        for message in pending {
            guard !closing, let id = assignments.take(message.topicPartition, offset: message.offset) else { continue }
            let record = KafkaRecord(
                id: id,
                storage: message.storage,
                keyCount: message.keyCount,
                headers: message.headers,
                timestampMilliseconds: message.timestampMilliseconds
            )
            if isPriority(message.topicPartition.topic) {
                priorityRecords.append(record)
            } else {
                records.append(record)
            }
        }
        buffered += records.count
        bufferedPriority += priorityRecords.count
        condition.unlock()
        pending.removeAll(keepingCapacity: true)
        if !priorityRecords.isEmpty {
            priorityContinuation.yield(.records(priorityRecords))
        }
        if !records.isEmpty {
            continuation.yield(.records(records))
        }
        client.callbacks.kafkaAnswered()
    }

    private func logMessageError(_ message: UnsafeMutablePointer<rd_kafka_message_t>) {
        let err = message.pointee.err
        guard err != RD_KAFKA_RESP_ERR__PARTITION_EOF else { return }
        let where_ = message.pointee.rkt.map { "\(String(cString: rd_kafka_topic_name($0)))[\(message.pointee.partition)]: " } ?? ""
        let error = KafkaError(err, message: where_ + String(cString: rd_kafka_message_errstr(message)))
        logger.warning("consumer: \(error)")
    }

    func storeCompletedOffsets() {
        condition.lock()
        let offsets = assignments.takeOffsetsToStore()
        condition.unlock()
        store(offsets)
    }

    /// rd_kafka_offsets_store for assigned partitions (ERR__STATE otherwise); the poll thread is
    /// the only one that changes the assignment, so "assigned" cannot change under us.
    func store(_ offsets: [(TopicPartition, Int64)]) {
        guard !offsets.isEmpty else { return }
        for (topicPartition, offset) in offsets { uncommitted[topicPartition] = offset }
        let list = RDKafkaTopicPartitionList(offsets: offsets)
        let err = list.withPointer { rd_kafka_offsets_store(client.handle, $0) }
        if err != RD_KAFKA_RESP_ERR_NO_ERROR {
            for (topicPartition, error) in list.elementErrors {
                logger.warning("cannot store offset of \(topicPartition): \(error)")
            }
        }
    }

    /// Synchronous commit of `offsets` (nil: of every offset stored since the last commit), for
    /// revokes and close; skipped when the assignment was lost, since the partitions may already
    /// belong to another member. What is confirmed leaves `uncommittedWeight`.
    func commit(_ offsets: [(TopicPartition, Int64)]?) {
        lastCommit = .now
        let offsets = offsets ?? uncommitted.map { ($0.key, $0.value) }
        guard !offsets.isEmpty, !failed, rd_kafka_assignment_lost(client.handle) == 0 else { return }
        let list = RDKafkaTopicPartitionList(offsets: offsets)
        let err = list.withPointer { rd_kafka_commit(client.handle, $0, 0) }
        if err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR__NO_OFFSET {
            commitFailed(KafkaError(err))
            return
        }
        let failedPartitions = Set(list.elementErrors.map(\.0))
        confirm(offsets.filter { !failedPartitions.contains($0.0) })
    }

    /// The periodic commit of what was stored since the last one: asynchronous, so the poll
    /// thread keeps taking records; the result comes back through `committed(_:_:)` in a poll.
    private func commitInBackground() {
        lastCommit = .now
        guard !failed, rd_kafka_assignment_lost(client.handle) == 0 else { return }
        let list = RDKafkaTopicPartitionList(offsets: uncommitted.map { ($0.key, $0.value) })
        let err = list.withPointer { rd_kafka_commit(client.handle, $0, 1) }
        if err != RD_KAFKA_RESP_ERR_NO_ERROR {
            commitFailed(KafkaError(err))
        }
    }

    /// A commit that failed: while Kafka (or the coordinator) does not answer, part of the outage's
    /// one warning (`RDKafkaCallbacks.kafkaFailed`); otherwise a warning of its own. What failed
    /// stays stored and goes with the next commit.
    func commitFailed(_ error: KafkaError) {
        if RDKafkaCallbacks.unreachableCodes.contains(error.code) {
            client.callbacks.kafkaFailed("commit failed: \(error)")
        } else {
            logger.warning("commit failed: \(error)")
        }
    }

    /// Drops what was stored for `partitions` and not yet committed: after a revoke they may belong
    /// to another member, which commits them from then on; a late commit of ours would move the
    /// group's offset back (and after a lost assignment, fail with UNKNOWN_MEMBER_ID every time).
    func forgetUncommitted(_ partitions: [TopicPartition]) {
        for topicPartition in partitions { uncommitted[topicPartition] = nil }
    }

    /// Offsets the broker confirmed: they are no longer waiting, nor counted in `uncommittedWeight`.
    private func confirm(_ offsets: [(TopicPartition, Int64)]) {
        guard !offsets.isEmpty else { return }
        for (topicPartition, offset) in offsets where (uncommitted[topicPartition] ?? .max) <= offset {
            uncommitted[topicPartition] = nil
        }
        condition.lock()
        assignments.committed(offsets)
        condition.unlock()
    }

    /// Pauses or resumes fetching on the assigned partitions of one lane (both when `priority`
    /// is nil).
    func setFetchPaused(_ paused: Bool, priority: Bool?) {
        let partitions = assignedPartitions().filter { priority == nil || isPriority($0.topic) == priority }
        if priority != true { fetchPaused = paused }
        if priority != false { priorityFetchPaused = paused }
        guard !partitions.isEmpty else { return }
        let list = RDKafkaTopicPartitionList(partitions)
        let err = list.withPointer { paused ? rd_kafka_pause_partitions(client.handle, $0) : rd_kafka_resume_partitions(client.handle, $0) }
        if err != RD_KAFKA_RESP_ERR_NO_ERROR {
            logger.warning("cannot \(paused ? "pause" : "resume") partitions: \(KafkaError(err))")
        }
        logger.debug(
            "fetching \(paused ? "paused" : "resumed")",
            metadata: ["partitions": "\(partitions.count)", "lane": "\(priority.map { $0 ? "priority" : "bulk" } ?? "all")"]
        )
    }

    /// librdkafka's current assignment.
    private func assignedPartitions() -> [TopicPartition] {
        var list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
        guard rd_kafka_assignment(client.handle, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list else { return [] }
        // rd_kafka_assignment hands us a list we must destroy.
        defer { rd_kafka_topic_partition_list_destroy(list) }
        return RDKafkaTopicPartitionList.partitions(of: list)
    }

    /// Clean shutdown: stop handing out records, wait for in-flight ones until `deadline` while
    /// still polling, store and commit, then leave the group.
    private func runClose(deadline: ContinuousClock.Instant) {
        condition.lock()
        if let consumerQueue { rd_kafka_queue_destroy(consumerQueue) }
        consumerQueue = nil
        condition.unlock()
        closing = true
        closeDrainDeadline = deadline
        continuation.finish()
        priorityContinuation.finish()
        awaitPendingJoin()
        condition.lock()
        assignments.beginRevoke(assignments.assigned)
        condition.unlock()
        setFetchPaused(true, priority: nil)
        while true {
            storeCompletedOffsets()
            condition.lock()
            var inFlight = assignments.started()
            if inFlight > 0 && ContinuousClock.now < deadline {
                drainWaiting = true
                let wake = min(deadline, .now + configuration.pollInterval)
                _ = condition.wait(until: Date(timeIntervalSinceNow: (wake - .now).seconds))
                drainWaiting = false
                inFlight = assignments.started()
            }
            condition.unlock()
            if inFlight == 0 || ContinuousClock.now >= deadline {
                if inFlight > 0 { logger.warning("consumer closing with \(inFlight) started records unfinished; they will be redelivered") }
                break
            }
            pollBatch(timeout: 0)  // serve logs and rebalances; records are dropped while closing
        }
        storeCompletedOffsets()
        commit(nil)
        // Serves the final revoke through our rebalance handler, then leaves the group.
        let err = rd_kafka_consumer_close(client.handle)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR {
            logger.warning("consumer close: \(KafkaError(err))")
        }
        condition.lock()
        closed = true
        let waiters = closeWaiters
        closeWaiters = []
        condition.unlock()
        for waiter in waiters { waiter.resume() }
        logger.info("consumer closed")
    }
}

extension ConsumerCore {
    /// Before leaving, lets a join round this member is part of complete (bounded by
    /// `closeJoinWait`), still polling: a LeaveGroup sent while this member's JoinGroup is pending
    /// leaves the embedded broker's round unfinished, and the members that stay never get an
    /// assignment (issue 27; docs/kafka.md). Once the round assigns, the close revokes and leaves
    /// from a completed group, which every broker handles. Records fetched meanwhile are dropped
    /// (`closing`): they are the next owner's.
    private func awaitPendingJoin() {
        // The consumer protocol (KIP-848) has no join rounds: the broker takes a leave at any time.
        guard joinPending, !failed, configuration.closeJoinWait > .zero, !configuration.usesConsumerGroupProtocol else { return }
        let began = ContinuousClock.now
        let until = began + configuration.closeJoinWait
        logger.info(
            "closing: waiting for the group's rebalance to assign this member before leaving",
            metadata: ["bound_ms": "\(configuration.closeJoinWait.milliseconds)"]
        )
        let pollMilliseconds = Int32(clamping: configuration.pollInterval.milliseconds)
        while joinPending && ContinuousClock.now < until {
            pollBatch(timeout: pollMilliseconds)
            // Bulk records fetched under the new assignment: dropped, but taken so they do not pile up.
            _ = bulkQueue.consume(upTo: configuration.maxBatchSize) { _ in }
        }
        let waited = (ContinuousClock.now - began).milliseconds
        if joinPending {
            logger.warning("closing: the group's rebalance did not complete within \(waited) ms; leaving anyway")
        } else {
            logger.info("closing: the rebalance completed after \(waited) ms; leaving the group")
        }
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

extension ConsumerCore: RDKafkaCommitHandler {
    /// librdkafka's commit result callback, on the poll thread (inside a poll).
    func committed(_ err: rd_kafka_resp_err_t, _ offsets: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?) {
        guard let offsets, err == RD_KAFKA_RESP_ERR_NO_ERROR || err == RD_KAFKA_RESP_ERR__NO_OFFSET else {
            if err != RD_KAFKA_RESP_ERR__NO_OFFSET { commitFailed(KafkaError(err)) }
            return
        }
        if err == RD_KAFKA_RESP_ERR_NO_ERROR { client.callbacks.kafkaAnswered() }
        confirm(
            RDKafkaTopicPartitionList.elements(of: offsets)
                .filter { $0.error == RD_KAFKA_RESP_ERR_NO_ERROR && $0.offset >= 0 }
                .map { ($0.partition, $0.offset) }
        )
    }
}
