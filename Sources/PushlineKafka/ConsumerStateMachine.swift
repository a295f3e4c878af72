/// The consumer's decisions as a pure value: what it owns and under which generation, the two
/// lanes' buffers and pauses, the started and completed records with their weights, when offsets
/// are stored and committed, the member's join, and the phases of a close. The clock is an input;
/// the answers are `ConsumerAction`s, which `ConsumerCore` performs on the poll thread (every
/// librdkafka call is made there, through `RDKafkaClient`).
///
/// Rebalances (`ConsumerStateMachine+Rebalance.swift`) and the close
/// (`ConsumerStateMachine+Close.swift`) are in their own files. Tests drive it with events alone
/// (`ConsumerStateMachineTests`).
struct ConsumerStateMachine: Sendable {
    /// What the machine needs of `KafkaConsumerConfiguration`.
    struct Settings: Sendable {
        var priorityTopics: Set<String> = []
        var maxBufferedRecords = 10_000
        var maxBatchSize = 1000
        var pollInterval: Duration = .milliseconds(10)
        var commitInterval: Duration = .milliseconds(200)
        var revokeDrainTimeout: Duration = .seconds(10)
        /// How long a close waits for a pending join round (zero: it does not).
        var closeJoinWait: Duration = .seconds(15)
        /// A lane's buffer full this long pauses its partitions. Pausing purges librdkafka's
        /// prefetched messages (they are fetched again on resume), so a reader that is merely a
        /// little behind is waited for instead (the bulk queue keeps its records meanwhile).
        var fullPauseAfter: Duration = .seconds(1)
        /// When to abandon a join the coordinator does not answer (zero: never).
        var stalledJoinLimit: Duration = .seconds(100)
        /// The rebalance protocol when librdkafka cannot say (no group yet): a cooperative
        /// assignment strategy, or the consumer protocol, whose rebalances are all incremental.
        var cooperativeByConfiguration = false
        /// The first assigned partition's generation.
        var firstGeneration: UInt64 = 1
        /// How long what was finished on a lost partition is kept for its return.
        var lostRetention: Duration = .seconds(600)
    }

    /// Where the consumer is in its life.
    enum Phase: Sendable, Hashable {
        /// Handing out records.
        case running
        /// A close was asked for: no record is handed out any more.
        case closeRequested
        /// Closing: waiting, up to `until`, for a join round this member is part of to assign it
        /// (a leave sent while its JoinGroup is pending can stall the round for the members that
        /// stay; docs/kafka.md).
        case awaitingJoin(JoinRound)
        /// Closing: every partition is being revoked; waiting for started records until the
        /// close deadline.
        case draining
        /// Closing: the last offsets are committed; the member leaves the group.
        case leaving
    }

    /// What the poll thread saw before asking `tick`.
    struct Observation: Sendable {
        var now: ContinuousClock.Instant
        /// Kafka does not answer this member (an outage): a join cannot complete meanwhile.
        var kafkaUnreachable = false
        /// librdkafka considers the assignment lost: its offsets must not be committed.
        var assignmentLost = false
        /// How many records the last look at the bulk queue took (nil: it was not looked at).
        var bulkTaken: Int?
    }

    /// What the poll thread does next.
    enum PollStep: Sendable {
        case poll(PollPlan)
        /// Begin the close protocol (`closeStep`).
        case close
    }

    /// One turn of the poll loop: the actions, then bulk records while the buffer has room, then
    /// the consumer queue (rebalances, logs, priority records) in every state. One of the two
    /// waits, up to `pollInterval`: the bulk queue when it had nothing last time and there is room
    /// (a bulk record then wakes the thread at once), else the consumer queue when the bulk buffer
    /// is full (a reader freeing room wakes it: `read` says so).
    struct PollPlan: Sendable {
        var actions: [ConsumerAction]
        /// How many bulk records to take (0: the bulk buffer is full).
        var bulkRoom: Int
        var bulkWaits: Bool
        /// The consumer queue waits while the bulk buffer is full.
        var consumerWaits: Bool { bulkRoom == 0 }
    }

    let settings: Settings
    // The state below changes only through the machine's methods; they span three files, so the
    // setters cannot be private.
    /// Partitions, generations, started and completed records, offsets to store.
    var assignments = AssignmentState()
    var bulk = ConsumerLaneState()
    var priority = ConsumerLaneState()
    /// `KafkaConsumer.pause()`: the bulk lane stays paused.
    var userPaused = false
    /// The bulk buffer was full at the last look, so the poll thread may be waiting on the
    /// consumer queue: the next `read` of bulk records should wake it.
    var bufferWaiting = false
    /// The bulk queue had nothing at the last look.
    var bulkIdle = false
    /// Offsets stored since the last commit, and when that commit was.
    var uncommitted: [TopicPartition: Int64] = [:]
    var lastCommit: ContinuousClock.Instant
    /// This member's JoinGroup may be pending at the coordinator: from the subscription to the
    /// first assignment, and from every revoke (after which librdkafka rejoins) to the next.
    var joinPending = true
    var stalledJoin: StalledJoin
    /// The last rebalance event ("assigned 4", "revoked 4", "lost 4") and when.
    var lastRebalance: (event: String, at: ContinuousClock.Instant)?
    /// The one record of where the consumer is in its life (`isRunning`, `isClosing` read it).
    var phase = Phase.running
    /// When a requested close stops waiting for started records.
    var closeDeadline: ContinuousClock.Instant?
    /// librdkafka raised a fatal error: nothing is committed any more.
    var failed = false

    init(settings: Settings, now: ContinuousClock.Instant) {
        self.settings = settings
        self.lastCommit = now
        self.stalledJoin = StalledJoin(bound: settings.stalledJoinLimit)
        self.assignments = AssignmentState(
            firstGeneration: settings.firstGeneration,
            lostRetention: settings.lostRetention
        )
    }

    /// `phase` is `.running`: read for every record taken. A phase has a fixed layout (its one
    /// payload is a reference, `JoinRound`), so this is a compare, with no value-witness call.
    var isRunning: Bool {
        if case .running = phase { return true }
        return false
    }

    var isClosing: Bool { !isRunning }

    func lane(of topic: String) -> ConsumerLane {
        !settings.priorityTopics.isEmpty && settings.priorityTopics.contains(topic) ? .priority : .bulk
    }

    // MARK: - Records

    /// A fetched record: its id and lane, or nil when it is dropped (its partition is not owned
    /// or is being revoked, or the consumer is closing: the next owner gets it; or its work was
    /// finished before its partition was lost and came back: `AssignmentState.take`). `resumed`:
    /// what was kept of a record done in part before such a loss.
    mutating func take(
        _ topicPartition: TopicPartition,
        offset: Int64,
        resumed: inout (any AnyObject & Sendable)?
    ) -> (id: RecordID, lane: ConsumerLane)? {
        guard isRunning, let id = assignments.take(topicPartition, offset: offset, resumed: &resumed) else { return nil }
        return (id, lane(of: topicPartition.topic))
    }

    /// `take(_:offset:resumed:)` for a caller that hands nothing kept on (tests).
    mutating func take(_ topicPartition: TopicPartition, offset: Int64) -> (id: RecordID, lane: ConsumerLane)? {
        var resumed: (any AnyObject & Sendable)?
        return take(topicPartition, offset: offset, resumed: &resumed)
    }

    /// Records of `lane` were handed to the reader.
    mutating func handedOut(_ count: Int, lane: ConsumerLane) {
        switch lane {
        case .bulk: bulk.buffered += count
        case .priority: priority.buffered += count
        }
    }

    /// The reader took `count` records of `lane`; true when the poll thread should be woken (the
    /// bulk buffer has room again, and it may sit out its poll timeout otherwise).
    mutating func read(_ count: Int, lane: ConsumerLane) -> Bool {
        switch lane {
        case .priority:
            priority.buffered -= count
            return false
        case .bulk:
            bulk.buffered -= count
            guard bufferWaiting else { return false }
            bufferWaiting = false
            return true
        }
    }

    /// Starts work on a handed-out record (`AssignmentState.start`).
    mutating func start(_ id: RecordID) -> Bool {
        assignments.start(id)
    }

    mutating func complete(_ id: RecordID, weight: Int) {
        _ = assignments.complete(id, weight: weight)
    }

    mutating func abandon(_ id: RecordID, resumable: (any AnyObject & Sendable)?) {
        assignments.abandon(id, resumable: resumable)
    }

    // MARK: - The poll loop

    /// One look of the poll thread: pauses and resumes, offsets to store, a commit when one is
    /// due, a stalled join to abandon, and how to poll; or, once a close was asked for, `.close`.
    mutating func tick(_ observation: Observation) -> PollStep {
        let now = observation.now
        if let taken = observation.bulkTaken { bulkIdle = taken == 0 }
        assignments.forgetExpiredLost(now: now)
        let room = settings.maxBufferedRecords - bulk.buffered
        bufferWaiting = room <= 0
        let bulkFullLong = bulk.observe(full: room <= 0, now: now, pauseAfter: settings.fullPauseAfter)
        let priorityFullLong = priority.observe(
            full: priority.buffered >= settings.maxBufferedRecords,
            now: now,
            pauseAfter: settings.fullPauseAfter
        )
        if phase == .running, closeDeadline != nil {
            beginClose()
            return .close
        }
        var actions: [ConsumerAction] = []
        let join = StalledJoin.Observation(
            now: now,
            joinPending: joinPending,
            owned: assignments.assignedCount,
            started: joinPending ? assignments.started() : 0,
            closing: isClosing || failed,
            kafkaUnreachable: joinPending && observation.kafkaUnreachable
        )
        if case .rejoin(let pendingFor) = stalledJoin.observe(join) {
            actions.append(.rejoin(pendingFor: pendingFor, rejoins: stalledJoin.rejoins))
        }
        let bulkPaused = userPaused || bulkFullLong
        if bulkPaused != bulk.fetchPaused { actions.append(setFetchPaused(bulkPaused, lane: .bulk)) }
        if priorityFullLong != priority.fetchPaused { actions.append(setFetchPaused(priorityFullLong, lane: .priority)) }
        storeCompleted(into: &actions)
        if !uncommitted.isEmpty, now - lastCommit >= settings.commitInterval {
            lastCommit = now
            if !failed, !observation.assignmentLost {
                actions.append(.commit(uncommittedOffsets, wait: false))
            }
        }
        return .poll(
            PollPlan(
                actions: actions,
                bulkRoom: room > 0 ? min(room, settings.maxBatchSize) : 0,
                bulkWaits: room > 0 && bulkIdle
            )
        )
    }

    /// Offsets the broker confirmed: they no longer wait for a commit, nor count in
    /// `uncommittedWeight`.
    mutating func committed(_ offsets: [(TopicPartition, Int64)]) {
        guard !offsets.isEmpty else { return }
        for (topicPartition, offset) in offsets where (uncommitted[topicPartition] ?? .max) <= offset {
            uncommitted[topicPartition] = nil
        }
        assignments.committed(offsets)
    }

    /// Pauses or resumes fetching on the owned partitions of `lane` (both lanes when nil).
    mutating func setFetchPaused(_ paused: Bool, lane: ConsumerLane?) -> ConsumerAction {
        if lane != .priority { bulk.fetchPaused = paused }
        if lane != .bulk { priority.fetchPaused = paused }
        let partitions = assignments.assigned.filter { lane == nil || self.lane(of: $0.topic) == lane }
        return .setFetchPaused(paused, partitions, lane: lane)
    }

    /// Appends the offsets that advanced since the last look, noting them for the next commit.
    mutating func storeCompleted(into actions: inout [ConsumerAction]) {
        let offsets = assignments.takeOffsetsToStore()
        guard !offsets.isEmpty else { return }
        for (topicPartition, offset) in offsets { uncommitted[topicPartition] = offset }
        actions.append(.storeOffsets(offsets))
    }

    var uncommittedOffsets: [(TopicPartition, Int64)] {
        uncommitted.map { ($0.key, $0.value) }
    }
}
