import PushlineAPNSCore

/// The pool machine's requests and retries: every request's state from `submit` to its finish
/// (`RequestTable`), the requests waiting out a retry backoff (and the earliest one due), the
/// suspects of a connection a server ended over a malformed request (`SuspectQueue`), and what an
/// answer means for a request: final, a retry after backoff, a free resend, a token refresh, a
/// wait in the app's hold (`ended` returns it as a `RequestNext`). A value owned by
/// `PoolStateMachine`; no I/O, no clock.
struct PoolRequests {
    let retryPolicy: RetryPolicy
    /// Free resends (not counted as attempts) one request may have before they count.
    let maxFreeResends: Int
    /// Whether the pool signs with provider tokens (an ExpiredProviderToken answer then asks for
    /// a refresh).
    let tokenAuth: Bool
    /// Every request from `submit` to its finish: the only place its changing state is kept.
    private var table = RequestTable()
    /// Requests waiting out a retry backoff, and the earliest time one of them is due.
    private var retrying: [RequestID] = []
    private(set) var earliestRetry: MonotonicInstant?
    /// Requests that may be one a server refused as malformed, going again one per connection.
    var suspects: SuspectQueue

    init(connections: Int, retryPolicy: RetryPolicy, maxFreeResends: Int, tokenAuth: Bool) {
        self.retryPolicy = retryPolicy
        self.maxFreeResends = maxFreeResends
        self.tokenAuth = tokenAuth
        suspects = SuspectQueue(connections: connections)
    }

    /// Requests the machine holds, wherever they are.
    var count: Int { table.count }

    /// Requests waiting to go again (retries and suspects; the queue is the machine's).
    var waiting: Int { retrying.count + suspects.count }

    subscript(id: RequestID) -> RequestState {
        _read { yield table[id] }
        _modify { yield &table[id] }
    }

    // MARK: In and out

    mutating func insert(_ state: consuming RequestState) -> RequestID {
        table.insert(state)
    }

    /// A request leaves for a connection: the attempt counts from here (a connection that cannot
    /// start it reports `notStarted`, which takes the attempt back).
    mutating func send(_ request: RequestID) -> OutgoingRequest {
        table[request].attempts += 1
        return OutgoingRequest(id: request, batch: table[request].batch, index: table[request].index)
    }

    func expired(_ request: RequestID, now: MonotonicInstant) -> Bool {
        table[request].options.deadline.map { $0 <= now } ?? false
    }

    /// The request's outcome is final: it leaves the machine.
    mutating func finish(_ request: RequestID, _ outcome: APNSOutcome, into actions: inout PoolActions) {
        let state = table.remove(request)
        actions.finishes.append((state.batch, state.index, outcome))
    }

    /// The request's outcome, made from its state as it leaves the machine, is final.
    mutating func finish(
        _ request: RequestID,
        into actions: inout PoolActions,
        outcome: (RequestState) -> APNSOutcome
    ) {
        let state = table.remove(request)
        actions.finishes.append((state.batch, state.index, outcome(state)))
    }

    // MARK: Retries

    mutating func scheduleRetry(_ request: RequestID, at time: MonotonicInstant) {
        table[request].retryAt = time
        retrying.append(request)
        if earliestRetry.map({ time < $0 }) ?? true { earliestRetry = time }
    }

    /// Removes from the retry list, in order, the requests `take` picks (clearing their retry
    /// time), and keeps the earliest retry time of the rest.
    mutating func takeRetrying(where take: (RequestState) -> Bool) -> [RequestID] {
        var kept: [RequestID] = []
        var taken: [RequestID] = []
        var earliest: MonotonicInstant?
        for request in retrying {
            if take(table[request]) {
                table[request].retryAt = nil
                taken.append(request)
            } else {
                kept.append(request)
                if let at = table[request].retryAt, earliest.map({ at < $0 }) ?? true { earliest = at }
            }
        }
        retrying = kept
        earliestRetry = earliest
        return taken
    }

    /// The retries that are due at `now`, out of the list in order.
    mutating func takeDueRetries(now: MonotonicInstant) -> [RequestID] {
        guard let earliestRetry, earliestRetry <= now else { return [] }
        return takeRetrying(where: { $0.retryAt.map { $0 <= now } ?? true })
    }

    /// Every request waiting to go again (retries, then waiting suspects), out of the lists.
    mutating func takeAllWaiting() -> [RequestID] {
        let taken = retrying + suspects.removeWaiting(where: { _ in true })
        retrying.removeAll()
        earliestRetry = nil
        return taken
    }

    // MARK: Answers

    /// A stream of `request` ended on `slot`: its send time is known, and it is no longer the
    /// app's probe nor `slot`'s suspect on the wire. Returns what it was.
    mutating func streamEnded(_ stream: StreamEnded, on slot: Int) -> (wasProbe: Bool, wasSuspect: Bool) {
        let request = stream.id
        if table[request].firstSentAt == nil { table[request].firstSentAt = stream.sentAt }
        let wasProbe = table[request].isProbe
        table[request].isProbe = false
        return (wasProbe, suspects.ended(request, on: slot))
    }

    /// A request was assigned to a connection that could not start it: the attempt does not
    /// count, and a probe is no longer out. True when it was the probe.
    mutating func notStarted(_ request: RequestID) -> Bool {
        table[request].attempts -= 1
        guard table[request].isProbe else { return false }
        table[request].isProbe = false
        return true
    }

    /// What follows a stream's end other than a 200 or a connection error (those are judged
    /// with the rest of their batch, `PoolStateMachine.streamsEnded`): the answer counts toward
    /// the app's `health`, and its verdict comes back as what to do with the request.
    mutating func ended(
        _ stream: StreamEnded,
        on slot: Int,
        wasProbe: Bool,
        wasSuspect: Bool,
        health: inout AppHealth,
        queued: LaneQueue,
        random: inout SplitMix64,
        now: MonotonicInstant,
        actions: inout PoolActions
    ) -> RequestNext {
        let request = stream.id
        switch stream.end {
        case .response(let response):
            return answered(request, response, stream.tokenGeneration, wasProbe, slot, &health, queued, &random, now, &actions)
        case .unprocessed where wasSuspect:
            // Not processed: it goes again as the suspect it is, without counting.
            table[request].attempts = max(0, table[request].attempts - 1)
            suspects.putBack(request, from: slot)
            return .done
        case .unprocessed:
            if wasProbe { health.probeReturned() }
            return resendFree(request, random: &random, now: now, actions: &actions)
        case .timedOut:
            let answer = Systemic(answer: .noResponse(.timeout), status: 0, reason: "timeout", kind: .transport)
            return systemic(request, answer, wasProbe, &health, queued, &random, now, &actions)
        case .lost:
            let answer = Systemic(answer: .noResponse(.connection), status: 0, reason: "connection", kind: .transport)
            return systemic(request, answer, wasProbe, &health, queued, &random, now, &actions)
        case .malformed:
            // The server named this request: the same bytes would be refused again.
            if wasProbe { health.probeReturned() }
            return .finish(table[request].outcome(.protocolError, at: now))
        case .connectionError:
            preconditionFailure("a connection error is judged with the connection's batch")
        }
    }

    private mutating func answered(
        _ request: RequestID,
        _ response: APNSResponse,
        _ tokenGeneration: UInt16,
        _ wasProbe: Bool,
        _ slot: Int,
        _ health: inout AppHealth,
        _ queued: LaneQueue,
        _ random: inout SplitMix64,
        _ now: MonotonicInstant,
        _ actions: inout PoolActions
    ) -> RequestNext {
        let disposition = APNSDisposition(response)
        guard APNSAnswerScope.of(response) == .systemic else {
            // About this notification alone: the app works.
            health.recordNotificationLevel(now: now)
            if wasProbe, let transition = health.probeSucceeded(now: now) { actions.transitions.append(transition) }
            if case .retryable(let kind) = disposition {
                return retry(request, kind: kind, final: table[request].outcome(response, at: now), random: &random, now: now)
            }
            return .finish(table[request].outcome(response, at: now))
        }
        if response.reason == .expiredProviderToken, tokenAuth {
            if tokenGeneration != 0 { actions.expiredTokens.append(tokenGeneration) }
            if table[request].tokenRefreshes == 0 {
                // The usual hourly case: refresh (if the 20-minute rule allows) and resend at
                // once (the resend counts as an attempt). Only an expiry that survives a refresh
                // says something about the key.
                table[request].tokenRefreshes += 1
                if wasProbe { health.probeReturned() }
                return .queue(atFront: true)
            }
        }
        var kind: APNSDisposition.RetryKind = .serverError
        if case .retryable(let retryKind) = disposition, retryKind != .providerTokenExpired { kind = retryKind }
        table[request].avoidSlot = kind == .serverError ? slot : nil
        let answer = Systemic(
            answer: .response(response),
            status: response.status,
            reason: response.reason?.rawValue ?? "",
            kind: kind,
            nonRetryable: !disposition.isRetryable
        )
        return systemic(request, answer, wasProbe, &health, queued, &random, now, &actions)
    }

    /// A systemic answer (or a transport failure), as `systemic` judges it.
    private struct Systemic {
        var answer: RequestState.SystemicAnswer
        var status: Int
        var reason: String
        var kind: APNSDisposition.RetryKind
        var nonRetryable = false
    }

    /// A systemic answer (or a transport failure). Held: requeued without counting. Not held:
    /// a retryable one follows the retry policy; a non-retryable one (an auth or topic refusal)
    /// is final only when the app is otherwise proven healthy (it is about this job), and is
    /// retried like a server error until the rate decides.
    private mutating func systemic(
        _ request: RequestID,
        _ systemic: Systemic,
        _ wasProbe: Bool,
        _ health: inout AppHealth,
        _ queued: LaneQueue,
        _ random: inout SplitMix64,
        _ now: MonotonicInstant,
        _ actions: inout PoolActions
    ) -> RequestNext {
        table[request].lastSystemic = systemic.answer
        let started = countSystemic(
            status: systemic.status,
            reason: systemic.reason,
            health: &health,
            queued: queued,
            now: now,
            actions: &actions
        )
        if !started, wasProbe { health.probeFailed(now: now, random: random.unit()) }
        let final: APNSOutcome
        switch systemic.answer {
        case .response(let response): final = table[request].outcome(response, at: now)
        case .noResponse(let why): final = table[request].outcome(why, at: now)
        }
        if health.isHeld {
            // Back to the queue without counting the attempt; it goes when a probe succeeds.
            table[request].attempts = max(0, table[request].attempts - 1)
            if table[request].heldSince == nil { table[request].heldSince = now }
            return .hold
        }
        if systemic.nonRetryable && health.provenHealthy(now: now) { return .finish(final) }
        return retry(request, kind: systemic.kind, final: final, random: &random, now: now)
    }

    /// Counts a systemic answer toward the app's health; true when it starts a hold (everything
    /// waiting then waits in the hold: the `queued` requests and the retries).
    private mutating func countSystemic(
        status: Int,
        reason: String,
        health: inout AppHealth,
        queued: LaneQueue,
        now: MonotonicInstant,
        actions: inout PoolActions
    ) -> Bool {
        guard let transition = health.recordSystemic(status: status, reason: reason, now: now) else { return false }
        actions.transitions.append(transition)
        for waiting in queued where table[waiting].heldSince == nil { table[waiting].heldSince = now }
        for waiting in retrying where table[waiting].heldSince == nil { table[waiting].heldSince = now }
        return true
    }

    /// The server ended a connection with an error one request's bytes can cause (a malformed
    /// header block) while `request` was unanswered, without saying which request it refused.
    /// Suspects go again one per connection at a time (`SuspectQueue`), so a suspect that was on
    /// the wire alone among suspects when its connection ended this way is the one: it ends
    /// `protocol_error` (`PoolStateMachine.connectionRefused`). Every other request that was in
    /// flight becomes a suspect, here. An innocent suspect is taken for the one at fault only if
    /// a second, different request at fault ends its connection while it is there. No attempt
    /// limit is needed, since each suspect's send either is answered or names it. Documented in
    /// docs/apns.md ("Requests a server refuses as malformed").
    mutating func becomeSuspect(
        _ request: RequestID,
        health: inout AppHealth,
        queued: LaneQueue,
        now: MonotonicInstant,
        actions: inout PoolActions
    ) {
        // Each lost request counts as a systemic answer, as any lost connection's do: a server
        // that ends every connection holds the app (and its suspects wait in the hold) instead of
        // naming suspects one by one; one bad request among answered ones does not reach the
        // hold's ratio.
        let reason = APNSOutcome.NoResponse.protocolError.rawValue
        _ = countSystemic(status: 0, reason: reason, health: &health, queued: queued, now: now, actions: &actions)
        suspects.add(request)
    }

    /// REFUSED_STREAM, above a GOAWAY's last-stream-id, or never sent: the server did not process
    /// it, so it goes again at once (at the front) without counting as an attempt, up to
    /// `maxFreeResends` times.
    private mutating func resendFree(
        _ request: RequestID,
        random: inout SplitMix64,
        now: MonotonicInstant,
        actions: inout PoolActions
    ) -> RequestNext {
        table[request].attempts = max(0, table[request].attempts - 1)
        table[request].freeResends += 1
        actions.freeResends += 1
        guard table[request].freeResends > maxFreeResends else { return .queue(atFront: true) }
        table[request].attempts += 1
        return retry(request, kind: .transport, final: table[request].outcome(.connection, at: now), random: &random, now: now)
    }

    /// A retryable failure: back off and resend (from the retry list), or end with `final`.
    private func retry(
        _ request: RequestID,
        kind: APNSDisposition.RetryKind,
        final: APNSOutcome,
        random: inout SplitMix64,
        now: MonotonicInstant
    ) -> RequestNext {
        let decision = retryPolicy.decide(
            after: table[request].attempts,
            kind: kind,
            remaining: table[request].options.retryUntil.map { $0 - now },
            random: random.unit()
        )
        switch decision {
        case .giveUp: return .finish(final)
        case .retry(let delay): return delay <= .zero ? .queue(atFront: false) : .retry(at: now + delay)
        }
    }
}
