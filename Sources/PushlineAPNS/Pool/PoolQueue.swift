import PushlineAPNSCore

/// The pool machine's queue and routing: the requests waiting for a stream (`LaneQueue`, urgent
/// before bulk), the groups their owner withdrew, the sweep that ends queued requests past their
/// deadline or hold limit, and the hand-out of queued requests (and suspects) to connections with
/// room (`drain`). A value owned by `PoolStateMachine`; no I/O, no clock.
struct PoolQueue {
    /// How often queued requests are checked for deadlines (and, while held, the hold limit).
    let sweepInterval: Duration
    /// How long one request may wait in a hold.
    let holdLimit: Duration
    /// Urgent requests before bulk ones: a free stream always takes an urgent one. The lanes
    /// count their requests with a deadline: with none, and the app not held, the sweep has
    /// nothing to look at (and does not walk a queue of thousands ten times a second).
    private(set) var lanes = LaneQueue()
    /// Groups given up by their owner (`withdraw`): their requests never go out again.
    private(set) var withdrawnGroups: Set<UInt64> = []
    /// When the next sweep is due (nil: none is scheduled).
    private var nextSweep: MonotonicInstant?

    init(sweepInterval: Duration, holdLimit: Duration) {
        self.sweepInterval = sweepInterval
        self.holdLimit = holdLimit
    }

    var count: Int { lanes.count }

    var isEmpty: Bool { lanes.isEmpty }

    // MARK: Queue

    /// To the queue (marked held when the app is), unless its group was withdrawn: then it ends
    /// `withdrawn`, and false.
    mutating func enqueue(
        _ request: RequestID,
        atFront: Bool,
        requests: inout PoolRequests,
        held: Bool,
        now: MonotonicInstant,
        actions: inout PoolActions
    ) -> Bool {
        if isWithdrawn(requests[request]) {
            requests.finish(request, into: &actions) { $0.outcome(.withdrawn, at: now) }
            return false
        }
        let options = requests[request].options
        if held, requests[request].heldSince == nil { requests[request].heldSince = now }
        if atFront {
            lanes.prepend(request, lane: options.lane, hasDeadline: options.deadline != nil)
        } else {
            lanes.append(request, lane: options.lane, hasDeadline: options.deadline != nil)
        }
        return true
    }

    /// Every queued request, out of the queue in order (the pool shut down).
    mutating func removeAll() -> [RequestID] {
        let all = Array(lanes)
        lanes.removeAll()
        return all
    }

    // MARK: Withdrawal

    func isWithdrawn(_ request: RequestState) -> Bool {
        Self.isWithdrawn(request, from: withdrawnGroups)
    }

    static func isWithdrawn(_ request: RequestState, from groups: Set<UInt64>) -> Bool {
        guard !groups.isEmpty, let group = request.options.group else { return false }
        return groups.contains(group)
    }

    /// The owner gives up `groups`: their queued requests end `withdrawn`, and so does any of
    /// their requests that would be queued later.
    mutating func withdraw(_ groups: [UInt64], requests: inout PoolRequests, now: MonotonicInstant, actions: inout PoolActions) {
        withdrawnGroups.formUnion(groups)
        let withdrawn = withdrawnGroups
        endQueued(requests: &requests, into: &actions) { request in
            Self.isWithdrawn(request, from: withdrawn) ? request.outcome(.withdrawn, at: now) : nil
        }
    }

    // MARK: Cancel

    /// Ends `cancelled` the queued requests (either lane, held or not) that `matches` picks.
    mutating func cancel(
        requests: inout PoolRequests,
        now: MonotonicInstant,
        actions: inout PoolActions,
        where matches: (RequestState) -> Bool
    ) {
        endQueued(requests: &requests, into: &actions) { request in
            matches(request) ? request.outcome(.cancelled, at: now) : nil
        }
    }

    // MARK: Sweep

    /// Ends queued requests whose deadline passed (`expired`), and, for requests that waited in
    /// a hold, those whose expiration passed (`expired`) or that reached the hold limit (the last
    /// systemic answer, with how long they were held), when a sweep is due.
    mutating func sweepIfDue(held: Bool, requests: inout PoolRequests, now: MonotonicInstant, actions: inout PoolActions) {
        guard let nextSweep, nextSweep <= now else { return }
        self.nextSweep = nil
        guard lanes.withDeadline > 0 || held else { return }
        let holdLimit = holdLimit
        endQueued(requests: &requests, into: &actions) { request in
            if let deadline = request.options.deadline, deadline <= now {
                request.outcome(.expired, at: now)
            } else if request.heldSince != nil, let retryUntil = request.options.retryUntil, retryUntil <= now {
                request.outcome(.expired, at: now)
            } else if let since = request.heldSince, now - since >= holdLimit {
                request.outcomeOfLastSystemicAnswer(at: now)
            } else {
                nil
            }
        }
    }

    /// When the next sweep is due, if one is needed (requests with a deadline are queued, or the
    /// app is held); schedules it one interval from `now` if none is.
    mutating func sweepWanted(held: Bool, now: MonotonicInstant) -> MonotonicInstant? {
        guard lanes.withDeadline > 0 || held else { return nil }
        if nextSweep == nil { nextSweep = now + sweepInterval }
        return nextSweep
    }

    /// Ends, with the outcome `end` gives, the queued requests it gives one for; the rest stay in
    /// order.
    private mutating func endQueued(
        requests: inout PoolRequests,
        into actions: inout PoolActions,
        _ end: (RequestState) -> APNSOutcome?
    ) {
        var ended: [(RequestID, APNSOutcome)] = []
        lanes.retain { request in
            guard let outcome = end(requests[request]) else { return true }
            ended.append((request, outcome))
            return false
        }
        for (request, outcome) in ended { requests.finish(request, outcome, into: &actions) }
    }

    // MARK: Routing

    /// Moves queued requests to the connections with the most free capacity, reserving a stream
    /// for each, until the queue is empty or no connection has room (suspects first, one per
    /// connection). Every hand-out takes a pacing token. A held app sends one probe at a time,
    /// when its backoff allows.
    mutating func drain(
        connections: inout PoolConnections,
        requests: inout PoolRequests,
        health: inout AppHealth,
        pacing: inout Pacing,
        now: MonotonicInstant,
        actions: inout PoolActions
    ) {
        if !requests.suspects.isEmpty && !health.isHeld {
            sendSuspects(connections: &connections, requests: &requests, pacing: &pacing, now: now, actions: &actions)
        }
        guard !lanes.isEmpty else { return }
        if health.isHeld {
            guard health.mayProbe(now: now) else { return }
            while let head = lanes.first, requests.expired(head, now: now) {
                requests.finish(lanes.removeFirst(), into: &actions) { $0.outcome(.expired, at: now) }
            }
            guard !lanes.isEmpty, let slot = slotForNext(connections, requests), pacing.take(now: now),
                connections.reserve(slot)
            else { return }
            let probe = lanes.removeFirst()
            requests[probe].isProbe = true
            health.probeSent()
            actions.sends.append((slot, [requests.send(probe)]))
            return
        }
        if lanes.count == 1 {
            // A job of one token: the same choice, without building per-connection batches.
            guard let slot = slotForNext(connections, requests), pacing.take(now: now), connections.reserve(slot) else {
                return
            }
            let request = lanes.removeFirst()
            if requests.expired(request, now: now) {
                connections.release(slot)
                requests.finish(request, into: &actions) { $0.outcome(.expired, at: now) }
            } else {
                actions.sends.append((slot, [requests.send(request)]))
            }
            return
        }
        var batches: [[OutgoingRequest]] = Array(repeating: [], count: connections.indices.count)
        while !lanes.isEmpty {
            guard let best = slotForNext(connections, requests), pacing.take(now: now), connections.reserve(best) else {
                break
            }
            let request = lanes.removeFirst()
            if requests.expired(request, now: now) {
                connections.release(best)
                requests.finish(request, into: &actions) { $0.outcome(.expired, at: now) }
                continue
            }
            if batches[best].isEmpty {
                // At most what is queued, or what the connection had free: one allocation.
                batches[best].reserveCapacity(min(lanes.count + 1, connections.available(best) + 1))
            }
            batches[best].append(requests.send(request))
        }
        actions.sends.reserveCapacity(actions.sends.count + batches.count { !$0.isEmpty })
        for (slot, batch) in batches.enumerated() where !batch.isEmpty {
            actions.sends.append((slot, batch))
        }
    }

    /// The connection for the request at the head of the queue (`PoolConnections.slotForNext`,
    /// away from the connection that answered it 503).
    private func slotForNext(_ connections: PoolConnections, _ requests: PoolRequests) -> Int? {
        connections.slotForNext(avoiding: lanes.first.flatMap { requests[$0].avoidSlot })
    }

    /// One suspect to each connection that has none on the wire and a free stream
    /// (`PoolStateMachine.connectionRefused`), ahead of the queue.
    private func sendSuspects(
        connections: inout PoolConnections,
        requests: inout PoolRequests,
        pacing: inout Pacing,
        now: MonotonicInstant,
        actions: inout PoolActions
    ) {
        for slot in connections.indices where connections.hasRoom(slot) {
            while let request = requests.suspects.next(for: slot) {
                if requests.expired(request, now: now) {
                    _ = requests.suspects.ended(request, on: slot)
                    requests.finish(request, into: &actions) { $0.outcome(.expired, at: now) }
                    continue
                }
                guard pacing.take(now: now), connections.reserve(slot) else {
                    requests.suspects.putBack(request, from: slot)
                    return
                }
                actions.sends.append((slot, [requests.send(request)]))
                break
            }
        }
    }
}
