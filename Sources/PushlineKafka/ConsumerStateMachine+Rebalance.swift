extension ConsumerStateMachine {
    /// How a revoke waits for the revoked partitions' started records.
    struct RevokeDrain: Sendable {
        /// When it stops waiting: `revokeDrainTimeout` from the revoke, or the close deadline.
        var deadline: ContinuousClock.Instant
        /// Records started when the revoke began.
        var started: Int
        /// The generations the partitions' records were handed out under.
        var generations: [UInt64]
    }

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
        joinPending = false
        lastRebalance = ("assigned \(added.count)", now)
        assignments.assign(added)
        var actions: [ConsumerAction] = [.assign(added, incremental: cooperative)]
        let bulkPartitions = added.filter { lane(of: $0.topic) == .bulk }
        if !bulkPartitions.isEmpty { actions.append(.routeToBulkQueue(bulkPartitions)) }
        let paused = added.filter { lane(of: $0.topic) == .priority ? priority.fetchPaused : bulk.fetchPaused }
        if !paused.isEmpty { actions.append(.setFetchPaused(true, paused, lane: nil)) }
        let running = added.filter { lane(of: $0.topic) == .priority ? !priority.fetchPaused : !bulk.fetchPaused }
        if !running.isEmpty { actions.append(.setFetchPaused(false, running, lane: nil)) }
        actions.append(.announceAssigned(added))
        return actions
    }

    /// A revoke of `revoked` begins: no more of their records are handed out or started. Their
    /// owner hears of it when records are started (`.began`; `.givingUp` at once when the
    /// assignment is lost, since nothing will be committed).
    mutating func beginRevoke(
        _ revoked: [TopicPartition],
        lost: Bool,
        now: ContinuousClock.Instant
    ) -> (drain: RevokeDrain, actions: [ConsumerAction]) {
        assignments.beginRevoke(revoked)
        let drain = RevokeDrain(
            deadline: phase == .running ? now + settings.revokeDrainTimeout : closeDeadline ?? now,
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
        if phase == .running { joinPending = true }
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
        if phase == .running { joinPending = true }
        lastRebalance = ("lost \(all.count)", now)
        var actions: [ConsumerAction] = []
        // The cooperative protocols refuse an eager unassign: what this member owns is given up
        // incrementally.
        if !cooperative || !all.isEmpty { actions.append(.unassign(all, incremental: cooperative)) }
        actions.append(.announceRevoked(all))
        return actions
    }
}
