/// The consumer's decisions as a pure value: what it owns and under which generation, the two
/// lanes' buffers and pauses, the started and completed records with their weights, when offsets
/// are stored and committed, the member's join, and the phases of a close. The clock is an input;
/// the answers are `ConsumerAction`s, which `ConsumerCore` performs on the poll thread (every
/// librdkafka call is made there, through `RDKafkaClient`).
///
/// Its storage is private: only its events change it. Where the consumer is in its life (a join
/// pending, a close asked for, a fatal error, the close's phases, closed) is one value,
/// `ConsumerState`. The value types of its events are in `ConsumerStateMachine+Settings.swift`,
/// `+Poll.swift`, `+Rebalance.swift` and `+Close.swift`. Tests drive it with events alone
/// (`ConsumerStateMachineTests`, `ConsumerLifecycleTests`).
struct ConsumerStateMachine: Sendable {
    let settings: Settings
    /// Partitions, generations, started and completed records, offsets to store.
    private(set) var assignments: AssignmentState
    /// The two lanes' buffers and pauses.
    private(set) var lanes = ConsumerLanes()
    /// Offsets stored since the last commit, and when that commit was.
    private(set) var uncommitted: [TopicPartition: Int64] = [:]
    private var lastCommit: ContinuousClock.Instant
    private var stalledJoin: StalledJoin
    /// The last rebalance event ("assigned 4", "revoked 4", "lost 4") and when.
    private(set) var lastRebalance: (event: String, at: ContinuousClock.Instant)?
    /// Where the consumer is in its life: the one record of it.
    private(set) var state = ConsumerState.running(joinPending: true)

    init(settings: Settings, now: ContinuousClock.Instant) {
        self.settings = settings
        self.lastCommit = now
        self.stalledJoin = StalledJoin(bound: settings.stalledJoinLimit)
        self.assignments = AssignmentState(
            firstGeneration: settings.firstGeneration,
            lostRetention: settings.lostRetention
        )
    }

    /// Handing out records: read for every record taken (`ConsumerState.isRunning`, a compare).
    var isRunning: Bool { state.isRunning }

    var isClosing: Bool { !isRunning }

    /// This member's JoinGroup may be pending (`ConsumerState.joinPending`).
    var joinPending: Bool { state.joinPending }

    /// librdkafka raised a fatal error: nothing is committed any more.
    var failed: Bool { state.failed }

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
        lanes.handedOut(count, lane: lane)
    }

    /// The reader took `count` records of `lane`; true when the poll thread should be woken
    /// (`ConsumerLanes.read`).
    mutating func read(_ count: Int, lane: ConsumerLane) -> Bool {
        lanes.read(count, lane: lane)
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

    /// `KafkaConsumer.pause()` and `resume()`: the next `tick` pauses or resumes the bulk lane.
    mutating func setUserPaused(_ paused: Bool) {
        lanes.setUserPaused(paused)
    }

    // MARK: - The poll loop

    /// One look of the poll thread: pauses and resumes, offsets to store, a commit when one is
    /// due, a stalled join to abandon, and how to poll; or, once a close was asked for, `.close`.
    mutating func tick(_ observation: Observation) -> PollStep {
        let now = observation.now
        assignments.forgetExpiredLost(now: now)
        let look = lanes.look(
            bulkTaken: observation.bulkTaken,
            now: now,
            limit: settings.maxBufferedRecords,
            pauseAfter: settings.fullPauseAfter
        )
        if case .closeAsked(let close, let pending) = state {
            // From now on no record is handed out.
            state = .closing(close, joinPending: pending)
            return .close
        }
        var actions: [ConsumerAction] = []
        let joinPending = state.joinPending
        let join = StalledJoin.Observation(
            now: now,
            joinPending: joinPending,
            owned: assignments.assignedCount,
            started: joinPending ? assignments.started() : 0,
            closing: isClosing,
            kafkaUnreachable: joinPending && observation.kafkaUnreachable
        )
        if case .rejoin(let pendingFor) = stalledJoin.observe(join) {
            actions.append(.rejoin(pendingFor: pendingFor, rejoins: stalledJoin.rejoins))
        }
        if look.bulkPaused != lanes.isFetchPaused(.bulk) { actions.append(setFetchPaused(look.bulkPaused, lane: .bulk)) }
        if look.priorityPaused != lanes.isFetchPaused(.priority) {
            actions.append(setFetchPaused(look.priorityPaused, lane: .priority))
        }
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
                bulkRoom: look.bulkRoom > 0 ? min(look.bulkRoom, settings.maxBatchSize) : 0,
                bulkWaits: look.bulkWaits
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
    private mutating func setFetchPaused(_ paused: Bool, lane: ConsumerLane?) -> ConsumerAction {
        lanes.setFetchPaused(paused, lane: lane)
        let partitions = assignments.assigned.filter { lane == nil || self.lane(of: $0.topic) == lane }
        return .setFetchPaused(paused, partitions, lane: lane)
    }

    /// Appends the offsets that advanced since the last look, noting them for the next commit.
    private mutating func storeCompleted(into actions: inout [ConsumerAction]) {
        let offsets = assignments.takeOffsetsToStore()
        guard !offsets.isEmpty else { return }
        for (topicPartition, offset) in offsets { uncommitted[topicPartition] = offset }
        actions.append(.storeOffsets(offsets))
    }

    var uncommittedOffsets: [(TopicPartition, Int64)] {
        uncommitted.map { ($0.key, $0.value) }
    }

    // MARK: - Rebalances

    /// Whether this rebalance is incremental: librdkafka's word when it has one, else the
    /// configuration's.
    func isCooperative(reported: Bool?) -> Bool {
        reported ?? settings.cooperativeByConfiguration
    }

    /// The group assigned `added` (cooperative rounds may add nothing): track them under fresh
    /// generations, take them, route the bulk ones, and set each lane's pause on them. librdkafka
    /// keeps an application pause on a partition across unassign and assign (an assign clears
    /// only its own pause), so a partition paused under an earlier assignment, and not resumed
    /// while unassigned, would never fetch again (issue 27): every added partition gets its
    /// lane's state.
    mutating func assigned(_ added: [TopicPartition], cooperative: Bool, now: ContinuousClock.Instant) -> [ConsumerAction] {
        state.setJoinPending(false)
        lastRebalance = ("assigned \(added.count)", now)
        assignments.assign(added)
        var actions: [ConsumerAction] = [.assign(added, incremental: cooperative)]
        let bulkPartitions = added.filter { lane(of: $0.topic) == .bulk }
        if !bulkPartitions.isEmpty { actions.append(.routeToBulkQueue(bulkPartitions)) }
        let paused = added.filter { lanes.isFetchPaused(lane(of: $0.topic)) }
        if !paused.isEmpty { actions.append(.setFetchPaused(true, paused, lane: nil)) }
        let running = added.filter { !lanes.isFetchPaused(lane(of: $0.topic)) }
        if !running.isEmpty { actions.append(.setFetchPaused(false, running, lane: nil)) }
        actions.append(.announceAssigned(added))
        return actions
    }

    /// A revoke of `revoked` begins: no more of their records are handed out or started. Their
    /// owner hears of it when records are started (`.began`; `.givingUp` at once when the
    /// assignment is lost, since nothing will be committed). A revoke served while closing waits
    /// until the close deadline.
    mutating func beginRevoke(
        _ revoked: [TopicPartition],
        lost: Bool,
        now: ContinuousClock.Instant
    ) -> (drain: RevokeDrain, actions: [ConsumerAction]) {
        assignments.beginRevoke(revoked)
        let drain = RevokeDrain(
            deadline: isRunning ? now + settings.revokeDrainTimeout : state.close?.deadline ?? now,
            started: assignments.started(revoked),
            generations: assignments.generations(revoked)
        )
        guard drain.started > 0 else { return (drain, []) }
        let notice = RevokeNotice(partitions: revoked, generations: drain.generations, stage: lost ? .givingUp : .began)
        return (drain, [.notifyRevoke(notice)])
    }

    /// Records of `partitions` started and not finished: what a revoke waits for (all when nil).
    func unfinished(_ partitions: [TopicPartition]? = nil) -> Int {
        assignments.started(partitions)
    }

    /// The revoke of `revoked` ends with `unfinished` records still started: their owner gives
    /// them up (the next owner redoes them); what completed is stored and committed at once
    /// (nothing when the assignment was lost: the partitions may already be another member's);
    /// the partitions are released. What was stored and not committed is forgotten: a late
    /// commit of ours would move the group's offset back.
    mutating func finishRevoke(
        _ revoked: [TopicPartition],
        lost: Bool,
        cooperative: Bool,
        drain: RevokeDrain,
        unfinished: Int,
        now: ContinuousClock.Instant
    ) -> [ConsumerAction] {
        var actions: [ConsumerAction] = []
        if !lost, unfinished > 0 {
            actions.append(.notifyRevoke(RevokeNotice(partitions: revoked, generations: drain.generations, stage: .givingUp)))
        }
        let completed = assignments.finishRevoke(revoked, lost: lost, now: now)
        if !lost, !completed.isEmpty {
            actions.append(.storeOffsets(completed))
            if !failed { actions.append(.commit(completed, wait: true)) }
        }
        for topicPartition in revoked { uncommitted[topicPartition] = nil }
        // librdkafka rejoins after a revoke (not when closing: that revoke is the last).
        state.setJoinPending(true)
        lastRebalance = ("\(lost ? "lost" : "revoked") \(revoked.count)", now)
        actions.append(.unassign(revoked, incremental: cooperative))
        actions.append(.announceRevoked(revoked))
        return actions
    }

    /// A rebalance librdkafka reported as an error: the whole assignment is dropped (its
    /// completed offsets are not committed) and released.
    mutating func rebalanceFailed(cooperative: Bool, now: ContinuousClock.Instant) -> [ConsumerAction] {
        let all = assignments.assigned
        _ = assignments.finishRevoke(all, lost: true, now: now)
        for topicPartition in all { uncommitted[topicPartition] = nil }
        state.setJoinPending(true)
        lastRebalance = ("lost \(all.count)", now)
        var actions: [ConsumerAction] = []
        // The cooperative protocols refuse an eager unassign: what this member owns is given up
        // incrementally.
        if !cooperative || !all.isEmpty { actions.append(.unassign(all, incremental: cooperative)) }
        actions.append(.announceRevoked(all))
        return actions
    }

    // MARK: - The close

    /// Asks for a close: records already started get until `deadline` (the first request's).
    mutating func requestClose(deadline: ContinuousClock.Instant) {
        state.requestClose(deadline: deadline)
    }

    /// librdkafka raised a fatal error: close at once, committing nothing. True the first time
    /// (the reader hears of the error once).
    @discardableResult
    mutating func fail(now: ContinuousClock.Instant) -> Bool {
        state.fail(now: now)
    }

    /// The close, one step per call: stop handing out records (`take` drops them from now on),
    /// let a pending join round complete (bounded), revoke and pause everything, wait for started
    /// records until the deadline while storing what completes, then commit and leave.
    mutating func closeStep(now: ContinuousClock.Instant, assignmentLost: Bool) -> CloseStep {
        switch state {
        case .running(let pending):
            // Not asked for (the executor asks first): a close with no time for started records.
            state = .closing(CloseRequest(deadline: now, failed: false), joinPending: pending)
            return closeStep(now: now, assignmentLost: assignmentLost)
        case .closeAsked(let close, let pending), .closing(let close, let pending):
            // The consumer protocol (KIP-848) has no join rounds (`closeJoinWait` is zero): the
            // broker takes a leave at any time.
            if pending, !close.failed, settings.closeJoinWait > .zero {
                let round = JoinRound(began: now, until: now + settings.closeJoinWait)
                state = .awaitingJoin(close, round, joinPending: true)
                return .awaitJoin(starting: true, bound: settings.closeJoinWait)
            }
            state = .draining(close)
            return .drain(actions: startDraining(), waitUntil: nil, joinWait: nil)
        case .awaitingJoin(let close, let round, let pending):
            if pending, now < round.until { return .awaitJoin(starting: false, bound: settings.closeJoinWait) }
            state = .draining(close)
            return .drain(actions: startDraining(), waitUntil: nil, joinWait: JoinWait(waited: now - round.began, completed: !pending))
        case .draining(let close):
            var actions: [ConsumerAction] = []
            storeCompleted(into: &actions)
            let started = assignments.started()
            if started > 0, now < close.deadline {
                return .drain(actions: actions, waitUntil: min(close.deadline, now + settings.pollInterval), joinWait: nil)
            }
            state = .leaving(close)
            if !close.failed, !assignmentLost, !uncommitted.isEmpty {
                actions.append(.commit(uncommittedOffsets, wait: true))
            }
            return .leave(actions: actions, unfinished: started)
        case .leaving, .closed:
            return .leave(actions: [], unfinished: assignments.started())
        }
    }

    /// The executor closed the consumer (it left the group): `close` answers at once from now on.
    mutating func closed() {
        state = .closed
    }

    var isClosed: Bool { state.isClosed }

    /// Every owned partition is being revoked and paused: nothing more is handed out or started.
    private mutating func startDraining() -> [ConsumerAction] {
        assignments.beginRevoke(assignments.assigned)
        return [setFetchPaused(true, lane: nil)]
    }
}
