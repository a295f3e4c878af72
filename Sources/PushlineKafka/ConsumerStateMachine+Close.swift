extension ConsumerStateMachine {
    /// The next step of a close.
    enum CloseStep: Sendable {
        /// Keep polling (rebalances and logs; records are dropped) for up to `pollInterval` while
        /// a pending join round may still assign this member, up to `bound` (`starting`: the
        /// first such step).
        case awaitJoin(starting: Bool, bound: Duration)
        /// Perform `actions`; then, when `waitUntil` is set, wait for started records to finish
        /// until then (a completion wakes the wait), and poll once.
        case drain(actions: [ConsumerAction], waitUntil: ContinuousClock.Instant?, joinWait: JoinWait?)
        /// Perform `actions` (the last stores and commit) and leave the group; `unfinished`
        /// records were still started at the deadline (the next owner redoes them).
        case leave(actions: [ConsumerAction], unfinished: Int)
    }

    /// How a close's wait for a join round ended.
    struct JoinWait: Sendable, Hashable {
        var waited: Duration
        /// The round assigned this member (else the wait ran out).
        var completed: Bool
    }

    /// Asks for a close: records already started get until `deadline` (the first request's).
    mutating func requestClose(deadline: ContinuousClock.Instant) {
        if closeDeadline == nil { closeDeadline = deadline }
    }

    /// librdkafka raised a fatal error: close at once, committing nothing.
    mutating func fail(now: ContinuousClock.Instant) {
        failed = true
        requestClose(deadline: now)
    }

    /// `tick` found a close requested: from now on no record is handed out.
    mutating func beginClose() {
        if phase == .running { phase = .closeRequested }
    }

    /// The close, one step per call: stop handing out records (`take` drops them from now on),
    /// let a pending join round complete (bounded), revoke and pause everything, wait for started
    /// records until the deadline while storing what completes, then commit and leave.
    mutating func closeStep(now: ContinuousClock.Instant, assignmentLost: Bool) -> CloseStep {
        switch phase {
        case .running, .closeRequested:
            // The consumer protocol (KIP-848) has no join rounds (`closeJoinWait` is zero): the
            // broker takes a leave at any time.
            if joinPending, !failed, settings.closeJoinWait > .zero {
                phase = .awaitingJoin(JoinRound(began: now, until: now + settings.closeJoinWait))
                return .awaitJoin(starting: true, bound: settings.closeJoinWait)
            }
            phase = .draining
            return .drain(actions: startDraining(), waitUntil: nil, joinWait: nil)
        case .awaitingJoin(let round):
            let began = round.began
            if joinPending, now < round.until { return .awaitJoin(starting: false, bound: settings.closeJoinWait) }
            phase = .draining
            return .drain(actions: startDraining(), waitUntil: nil, joinWait: JoinWait(waited: now - began, completed: !joinPending))
        case .draining:
            var actions: [ConsumerAction] = []
            storeCompleted(into: &actions)
            let started = assignments.started()
            let deadline = closeDeadline ?? now
            if started > 0, now < deadline {
                return .drain(actions: actions, waitUntil: min(deadline, now + settings.pollInterval), joinWait: nil)
            }
            phase = .leaving
            if !failed, !assignmentLost, !uncommitted.isEmpty {
                actions.append(.commit(uncommittedOffsets, wait: true))
            }
            return .leave(actions: actions, unfinished: started)
        case .leaving:
            return .leave(actions: [], unfinished: assignments.started())
        }
    }

    /// Every owned partition is being revoked and paused: nothing more is handed out or started.
    private mutating func startDraining() -> [ConsumerAction] {
        assignments.beginRevoke(assignments.assigned)
        return [setFetchPaused(true, lane: nil)]
    }
}
