import NIOCore
import PushlineAPNSCore

/// Every decision of one APNs pool, as a pure state machine: which connection a request goes to,
/// what follows each answer (final, retry after backoff, free resend, token refresh, hold), the
/// connections' lifecycles and stream capacities, and the app's health (hold, probe, resume).
///
/// Events come in (`submit`, connection events, `streamsEnded`, `tick`, `shutDown`), each with
/// the time it happened; every event returns the `PoolActions` it decided. The machine does no
/// I/O and reads no clock, so tests drive it without sockets. `APNSClient` holds it under one
/// lock and performs the actions after releasing it; a connection reports all the streams that
/// ended in one event-loop read batch as one event (one lock per batch).
///
/// The machine owns every request's state (`RequestTable`: attempts, send times, holds, probes),
/// from `submit` until the request's `finishes` entry. A request itself is immutable (a
/// `RequestBatch` and an index); connections get `OutgoingRequest`s and answer with plain values
/// (`StreamEnded`), so nothing the machine decides on is written by anyone else.
///
/// Every request the machine accepted ends in exactly one `finishes` entry: requests queued,
/// waiting to retry or held are the machine's, and `shutDown` finishes them.
struct PoolStateMachine {
    struct Settings {
        var connections: Int
        var configuredCap: Int
        var tokenAuth: Bool
        var maxQueuedRequests: Int = 1_000_000
        var retryPolicy = RetryPolicy()
        var maxFreeResends = 50
        var health = AppHealth.Thresholds()
        /// How often queued requests are checked for deadlines (and, while held, the hold limit).
        var sweepInterval: Duration = .milliseconds(100)
        /// Pacing: at most this many requests per second leave the pool (nil = as fast as the
        /// streams allow). Retries and probes count too.
        var maxRate: Int?
        var seed: UInt64 = 0x5DEE_CE66_D1CE_4E5B
    }

    let settings: Settings
    private(set) var lifecycles: [ConnectionLifecycle]
    private(set) var capacities: [StreamCapacity]
    private(set) var health: AppHealth
    /// Every request from `submit` to its finish: the only place its changing state is kept.
    private var requests = RequestTable()
    /// Urgent requests before bulk ones (`LaneQueue`): a free stream always takes an urgent one.
    private var queue = LaneQueue()
    /// Queued requests that carry a deadline: when none does and the app is not held, the sweep
    /// has nothing to look at (and does not walk a queue of thousands ten times a second).
    private var queuedWithDeadline = 0
    /// Requests waiting out a retry backoff, and the earliest time one of them is due.
    private var retrying: [RequestID] = []
    /// Requests that may be one a server refused as malformed, going again one per connection.
    private var suspects: SuspectQueue
    private var earliestRetry: MonotonicInstant?
    private var nextSweep: MonotonicInstant?
    /// The tick the owner has been asked for and that has not come yet.
    private var tickAt: MonotonicInstant?
    private(set) var isShutDown = false
    private var random: SplitMix64
    /// `settings.maxRate`'s bucket; nil when the pool is not paced.
    private var pace: TokenBucket?
    /// Whether the last drain stopped for want of a pacing token (a tick is then needed).
    private var pacedOut = false
    /// Groups given up by their owner (`withdraw`): their requests never go out again.
    private var withdrawnGroups: Set<UInt64> = []

    init(settings: Settings, now: MonotonicInstant) {
        self.settings = settings
        let connections = max(1, settings.connections)
        lifecycles = Array(repeating: ConnectionLifecycle(), count: connections)
        capacities = Array(
            repeating: StreamCapacity(configuredCap: settings.configuredCap, tokenAuth: settings.tokenAuth),
            count: connections
        )
        health = AppHealth(thresholds: settings.health, origin: now)
        random = SplitMix64(seed: settings.seed)
        pace = settings.maxRate.map { TokenBucket(rate: $0, now: now) }
        suspects = SuspectQueue(connections: connections)
    }

    /// Requests waiting for a stream (queued, held, or waiting out a backoff).
    var waiting: Int { queue.count + retrying.count + suspects.count }

    var queuedCount: Int { queue.count }

    /// Queued urgent requests (the rest are bulk).
    var queuedUrgent: Int { queue.count(of: .urgent) }

    /// Requests the machine holds, wherever they are (queued, in flight, waiting to retry, held).
    var requestCount: Int { requests.count }

    // MARK: Requests

    /// New requests: to the back of the queue; what fits goes out at once. Beyond
    /// `maxQueuedRequests`, or after shutdown, they end at once.
    mutating func submit(_ batch: RequestBatch, now: MonotonicInstant) -> PoolActions {
        submit(CollectionOfOne(batch), now: now)
    }

    /// Several batches in one step: one settle, so their sends go out together.
    mutating func submit(_ batches: some Sequence<RequestBatch>, now: MonotonicInstant) -> PoolActions {
        var actions = PoolActions()
        for batch in batches {
            admit(batch, now: now, actions: &actions)
        }
        if !isShutDown { settle(&actions, now: now) }
        return actions
    }

    /// Queues a batch's requests while the queue has room; the rest end at once (`connection`),
    /// and all of them after shutdown (`shutdown`).
    private mutating func admit(_ batch: RequestBatch, now: MonotonicInstant, actions: inout PoolActions) {
        if isShutDown {
            for index in 0..<batch.count {
                actions.finishes.append((batch, index, RequestState(batch: batch, index: index).outcome(.shutdown, at: now)))
            }
            return
        }
        let room = max(0, settings.maxQueuedRequests - waiting)
        for index in 0..<batch.count {
            if index < room {
                enqueue(requests.insert(RequestState(batch: batch, index: index)), now: now, actions: &actions)
            } else {
                actions.finishes.append((batch, index, RequestState(batch: batch, index: index).outcome(.connection, at: now)))
            }
        }
    }

    /// The streams that ended on connection `slot` in one event-loop batch, in order.
    ///
    /// The answers of one batch arrived together: its successes are finished first and counted
    /// as evidence before any other answer of the batch is judged (one pass; the rest, rare, is
    /// kept aside by index).
    mutating func streamsEnded(slot: Int, _ ended: [StreamEnded], now: MonotonicInstant) -> PoolActions {
        var actions = PoolActions()
        // Most answers are final (one allocation for all of them, not one per doubling).
        actions.finishes.reserveCapacity(ended.count)
        var successes = 0
        var probeSucceeded = false
        var others: [Int] = []
        var refused: [(request: RequestID, wasSuspect: Bool)] = []
        for (position, stream) in ended.enumerated() {
            capacities[slot].release()
            let request = stream.id
            if requests[request].firstSentAt == nil { requests[request].firstSentAt = stream.sentAt }
            if case .response(let response) = stream.end, response.status == 200 {
                successes += 1
                if requests[request].isProbe {
                    requests[request].isProbe = false
                    probeSucceeded = true
                }
                _ = suspects.ended(request, on: slot)
                finish(request, into: &actions) { $0.outcome(response, at: now) }
            } else {
                others.append(position)
            }
        }
        if successes > 0 {
            // A 200 proves the provider token: the connection stops probing with one stream.
            capacities[slot].succeeded()
            health.recordNotificationLevel(successes, now: now)
        }
        if probeSucceeded { resume(&actions, now: now) }
        for position in others {
            let stream = ended[position]
            let request = stream.id
            let wasProbe = requests[request].isProbe
            requests[request].isProbe = false
            let wasSuspect = suspects.ended(request, on: slot)
            switch stream.end {
            case .response(let response):
                // Any answer but an authentication failure proves the provider token too (a 410
                // or a 400 is as good as a 200).
                let status = response.status
                if status < 500 && status != 403 && status != 429 { capacities[slot].succeeded() }
                answered(
                    request,
                    response,
                    tokenGeneration: stream.tokenGeneration,
                    wasProbe: wasProbe,
                    slot: slot,
                    now: now,
                    actions: &actions
                )
            case .unprocessed where wasSuspect:
                // Not processed: it goes again as the suspect it is, without counting.
                requests[request].attempts = max(0, requests[request].attempts - 1)
                suspects.putBack(request, from: slot)
            case .unprocessed:
                if wasProbe { health.probeReturned() }
                resendFree(request, now: now, actions: &actions)
            case .timedOut:
                systemic(
                    request,
                    .noResponse(.timeout),
                    status: 0,
                    reason: "timeout",
                    retry: .transport,
                    wasProbe: wasProbe,
                    now: now,
                    actions: &actions
                )
            case .lost:
                systemic(
                    request,
                    .noResponse(.connection),
                    status: 0,
                    reason: "connection",
                    retry: .transport,
                    wasProbe: wasProbe,
                    now: now,
                    actions: &actions
                )
            case .malformed:
                // The server named this request: the same bytes would be refused again.
                if wasProbe { health.probeReturned() }
                finish(request, requests[request].outcome(.protocolError, at: now), into: &actions)
            case .connectionError:
                if wasProbe { health.probeReturned() }
                refused.append((request, wasSuspect))
            }
        }
        if !refused.isEmpty { connectionRefused(refused, now: now, actions: &actions) }
        actions.connection(slot, lifecycles[slot].streamClosed(openStreams: capacities[slot].reserved))
        settle(&actions, now: now)
        return actions
    }

    /// Requests assigned to `slot` that it could not start (it closed, or got a GOAWAY, before
    /// they reached it): their slots are released, their attempts do not count, and they go
    /// again at once, at the front of the queue. The connection stops taking requests first, so
    /// they go elsewhere (or wait for a connection).
    mutating func notStarted(
        slot: Int,
        _ ids: [RequestID],
        connectionUnusable: Bool,
        now: MonotonicInstant
    ) -> PoolActions {
        var actions = PoolActions()
        for request in ids {
            capacities[slot].release()
            requests[request].attempts -= 1
            if requests[request].isProbe {
                requests[request].isProbe = false
                health.probeReturned()
            }
        }
        if connectionUnusable {
            actions.connection(slot, lifecycles[slot].stopUsing(openStreams: capacities[slot].reserved))
        }
        // In their order, ahead of what was queued behind them (a suspect, ahead of the suspects).
        for request in ids.reversed() {
            if suspects.inFlight(on: slot) == request {
                suspects.putBack(request, from: slot)
            } else {
                enqueue(request, atFront: true, now: now, actions: &actions)
            }
        }
        settle(&actions, now: now)
        return actions
    }

    /// Time passed: retries that are due join the queue, queued requests past their deadline
    /// (or, when held, past the hold limit) end, and a held app may probe.
    mutating func tick(now: MonotonicInstant) -> PoolActions {
        var actions = PoolActions()
        if let tickAt, tickAt <= now { self.tickAt = nil }
        if let earliestRetry, earliestRetry <= now { releaseRetries(now: now, actions: &actions) }
        if let nextSweep, nextSweep <= now {
            self.nextSweep = nil
            sweep(now: now, actions: &actions)
        }
        settle(&actions, now: now)
        return actions
    }

    /// Shut down for good: every connection closes politely (GOAWAY, its open streams end, then
    /// TCP), and every request the machine holds ends (`shutdown`: not final for the worker,
    /// which leaves such jobs to the group's next owner). Requests in flight end with their
    /// answers, or as their streams fail; none is sent again.
    mutating func shutDown(now: MonotonicInstant) -> PoolActions {
        var actions = PoolActions()
        guard !isShutDown else { return actions }
        isShutDown = true
        for slot in lifecycles.indices { actions.connection(slot, lifecycles[slot].shutDown()) }
        for request in queue { finish(request, into: &actions) { $0.outcome(.shutdown, at: now) } }
        for request in retrying { finish(request, into: &actions) { $0.outcome(.shutdown, at: now) } }
        for request in suspects.removeWaiting(where: { _ in true }) {
            finish(request, into: &actions) { $0.outcome(.shutdown, at: now) }
        }
        queue.removeAll()
        queuedWithDeadline = 0
        retrying.removeAll()
        earliestRetry = nil
        return actions
    }

    /// The owner gives up the work of `groups` (the worker: Kafka partitions that moved to another
    /// member, which sends their jobs). Their requests that have not gone out (queued, held,
    /// waiting to retry) end at once as `withdrawn`, and so does any of them that comes back later
    /// for another attempt; requests on the wire end with their answers. With `onlyWhileHeld`,
    /// nothing happens unless the app is held (its requests could not go out soon anyway).
    mutating func withdraw(groups: [UInt64], onlyWhileHeld: Bool, now: MonotonicInstant) -> PoolActions {
        var actions = PoolActions()
        guard !groups.isEmpty, !onlyWhileHeld || health.isHeld else { return actions }
        withdrawnGroups.formUnion(groups)
        let withdrawn = withdrawnGroups
        endQueued(into: &actions) { request in
            Self.isWithdrawn(request, from: withdrawn) ? request.outcome(.withdrawn, at: now) : nil
        }
        for request in takeRetrying(where: { Self.isWithdrawn($0, from: withdrawn) }) {
            finish(request, into: &actions) { $0.outcome(.withdrawn, at: now) }
        }
        let withdrawnSuspects = suspects.removeWaiting { [requests] in Self.isWithdrawn(requests[$0], from: withdrawn) }
        for request in withdrawnSuspects {
            finish(request, into: &actions) { $0.outcome(.withdrawn, at: now) }
        }
        settle(&actions, now: now)
        return actions
    }

    // MARK: Connections

    mutating func connectFailed(slot: Int, now: MonotonicInstant) -> PoolActions {
        var actions = PoolActions()
        actions.connection(slot, lifecycles[slot].connectFailed(random: random.unit()))
        return actions
    }

    /// TLS is up; `peerLimit` is the server's SETTINGS_MAX_CONCURRENT_STREAMS if it came already.
    mutating func connected(slot: Int, peerLimit: Int?, now: MonotonicInstant) -> PoolActions {
        var actions = PoolActions()
        capacities[slot].reconnected(tokenAuth: settings.tokenAuth)
        if let peerLimit { capacities[slot].peerLimitChanged(peerLimit) }
        actions.connection(slot, lifecycles[slot].connected())
        settle(&actions, now: now)
        return actions
    }

    mutating func peerLimitChanged(slot: Int, to limit: Int, now: MonotonicInstant) -> PoolActions {
        var actions = PoolActions()
        capacities[slot].peerLimitChanged(limit)
        settle(&actions, now: now)
        return actions
    }

    /// GOAWAY: no new streams here; the connection closes after its last one.
    mutating func goAway(slot: Int, now: MonotonicInstant) -> PoolActions {
        var actions = PoolActions()
        actions.connection(slot, lifecycles[slot].stopUsing(openStreams: capacities[slot].reserved))
        settle(&actions, now: now)
        return actions
    }

    /// A PING went unanswered: the connection is abandoned at once.
    mutating func pingLost(slot: Int, now: MonotonicInstant) -> PoolActions {
        var actions = PoolActions()
        actions.connection(slot, lifecycles[slot].pingLost())
        settle(&actions, now: now)
        return actions
    }

    /// The channel closed (its streams were reported ended before this).
    mutating func closed(slot: Int, now: MonotonicInstant) -> PoolActions {
        var actions = PoolActions()
        actions.connection(slot, lifecycles[slot].closed(random: random.unit()))
        settle(&actions, now: now)
        return actions
    }

    mutating func backoffElapsed(slot: Int, now: MonotonicInstant) -> PoolActions {
        var actions = PoolActions()
        actions.connection(slot, lifecycles[slot].backoffElapsed())
        return actions
    }

    // MARK: Answers

    private mutating func answered(
        _ request: RequestID,
        _ response: APNSResponse,
        tokenGeneration: UInt16,
        wasProbe: Bool,
        slot: Int,
        now: MonotonicInstant,
        actions: inout PoolActions
    ) {
        let disposition = APNSDisposition(response)
        guard APNSAnswerScope.of(response) == .systemic else {
            // About this notification alone: the app works.
            health.recordNotificationLevel(now: now)
            if wasProbe { resume(&actions, now: now) }
            if case .retryable(let kind) = disposition {
                retry(request, kind: kind, final: requests[request].outcome(response, at: now), now: now, actions: &actions)
            } else {
                finish(request, into: &actions) { $0.outcome(response, at: now) }
            }
            return
        }
        if response.reason == .expiredProviderToken, settings.tokenAuth {
            if tokenGeneration != 0 { actions.expiredTokens.append(tokenGeneration) }
            if requests[request].tokenRefreshes == 0 {
                // The usual hourly case: refresh (if the 20-minute rule allows) and resend at
                // once (the resend counts as an attempt). Only an expiry that survives a refresh
                // says something about the key.
                requests[request].tokenRefreshes += 1
                if wasProbe { health.probeReturned() }
                enqueue(request, atFront: true, now: now, actions: &actions)
                return
            }
        }
        var kind: APNSDisposition.RetryKind = .serverError
        if case .retryable(let retryKind) = disposition, retryKind != .providerTokenExpired { kind = retryKind }
        requests[request].avoidSlot = kind == .serverError ? slot : nil
        systemic(
            request,
            .response(response),
            status: response.status,
            reason: response.reason?.rawValue ?? "",
            retry: kind,
            nonRetryable: !disposition.isRetryable,
            wasProbe: wasProbe,
            now: now,
            actions: &actions
        )
    }

    /// A systemic answer (or a transport failure). Held: requeued without counting. Not held:
    /// a retryable one follows the retry policy; a non-retryable one (an auth or topic refusal)
    /// is final only when the app is otherwise proven healthy (it is about this job), and is
    /// retried like a server error until the rate decides.
    private mutating func systemic(
        _ request: RequestID,
        _ answer: RequestState.SystemicAnswer,
        status: Int,
        reason: String,
        retry kind: APNSDisposition.RetryKind,
        nonRetryable: Bool = false,
        wasProbe: Bool,
        now: MonotonicInstant,
        actions: inout PoolActions
    ) {
        requests[request].lastSystemic = answer
        if !countSystemic(status: status, reason: reason, now: now, actions: &actions), wasProbe {
            health.probeFailed(now: now, random: random.unit())
        }
        let final: APNSOutcome
        switch answer {
        case .response(let response): final = requests[request].outcome(response, at: now)
        case .noResponse(let why): final = requests[request].outcome(why, at: now)
        }
        if health.isHeld {
            hold(request, now: now, actions: &actions)
        } else if nonRetryable && health.provenHealthy(now: now) {
            finish(request, final, into: &actions)
        } else {
            retry(request, kind: kind, final: final, now: now, actions: &actions)
        }
    }

    /// Counts a systemic answer toward the app's health; true when it starts a hold (everything
    /// waiting then waits in the hold).
    private mutating func countSystemic(status: Int, reason: String, now: MonotonicInstant, actions: inout PoolActions) -> Bool {
        guard let transition = health.recordSystemic(status: status, reason: reason, now: now) else { return false }
        actions.transitions.append(transition)
        for waiting in queue where requests[waiting].heldSince == nil { requests[waiting].heldSince = now }
        for waiting in retrying where requests[waiting].heldSince == nil { requests[waiting].heldSince = now }
        return true
    }

    /// Back to the queue without counting the attempt; it goes when a probe succeeds.
    private mutating func hold(_ request: RequestID, now: MonotonicInstant, actions: inout PoolActions) {
        requests[request].attempts = max(0, requests[request].attempts - 1)
        if requests[request].heldSince == nil { requests[request].heldSince = now }
        if enqueue(request, now: now, actions: &actions) { actions.heldRequests += 1 }
    }

    private mutating func resume(_ actions: inout PoolActions, now: MonotonicInstant) {
        if let transition = health.probeSucceeded(now: now) { actions.transitions.append(transition) }
    }

    /// REFUSED_STREAM, above a GOAWAY's last-stream-id, or never sent: the server did not process
    /// it, so it goes again at once (at the front) without counting as an attempt.
    private mutating func resendFree(_ request: RequestID, now: MonotonicInstant, actions: inout PoolActions) {
        requests[request].attempts = max(0, requests[request].attempts - 1)
        requests[request].freeResends += 1
        actions.freeResends += 1
        if requests[request].freeResends > settings.maxFreeResends {
            requests[request].attempts += 1
            retry(request, kind: .transport, final: requests[request].outcome(.connection, at: now), now: now, actions: &actions)
            return
        }
        enqueue(request, atFront: true, now: now, actions: &actions)
    }

    /// The server ended a connection with an error one request's bytes can cause (a malformed
    /// header block) while `inFlight` were unanswered, without saying which request it refused.
    /// Suspects go again one per connection at a time (`SuspectQueue`), so a suspect that was on
    /// the wire alone among suspects when its connection ended this way is the one: it ends
    /// `protocol_error`. Every other request that was in flight becomes a suspect. An innocent
    /// suspect is taken for the one at fault only if a second, different request at fault ends
    /// its connection while it is there. No attempt limit is needed, since each suspect's send
    /// either is answered or names it. Each lost request counts toward the app's health as a lost
    /// connection's requests do. Documented in docs/apns.md ("Requests a server refuses as
    /// malformed").
    private mutating func connectionRefused(
        _ inFlight: [(request: RequestID, wasSuspect: Bool)],
        now: MonotonicInstant,
        actions: inout PoolActions
    ) {
        for (request, wasSuspect) in inFlight {
            if wasSuspect {
                finish(request, requests[request].outcome(.protocolError, at: now), into: &actions)
            } else if !finishedIfGone(request, now: now, actions: &actions) {
                // Each lost request counts as a systemic answer, as any lost connection's do: a
                // server that ends every connection holds the app (and its suspects wait in the
                // hold) instead of naming suspects one by one; one bad request among answered
                // ones does not reach the hold's ratio.
                _ = countSystemic(status: 0, reason: APNSOutcome.NoResponse.protocolError.rawValue, now: now, actions: &actions)
                suspects.add(request)
            }
        }
    }

    /// A retryable failure: back off and resend (from the machine's retry list), or end with `final`.
    private mutating func retry(
        _ request: RequestID,
        kind: APNSDisposition.RetryKind,
        final: APNSOutcome,
        now: MonotonicInstant,
        actions: inout PoolActions
    ) {
        let remaining = requests[request].options.retryUntil.map { $0 - now }
        let decision = settings.retryPolicy.decide(
            after: requests[request].attempts,
            kind: kind,
            remaining: remaining,
            random: random.unit()
        )
        switch decision {
        case .giveUp:
            finish(request, final, into: &actions)
        case .retry(let delay):
            if delay <= .zero {
                enqueue(request, now: now, actions: &actions)
            } else {
                retry(request, at: now + delay, now: now, actions: &actions)
            }
        }
    }

    private mutating func retry(
        _ request: RequestID,
        at time: MonotonicInstant,
        now: MonotonicInstant,
        actions: inout PoolActions
    ) {
        if finishedIfGone(request, now: now, actions: &actions) { return }
        requests[request].retryAt = time
        retrying.append(request)
        if earliestRetry.map({ time < $0 }) ?? true { earliestRetry = time }
    }

    /// Ends a request that is not to go again because the pool shut down (`shutdown`) or its
    /// group was withdrawn (`withdrawn`); false when it may go again.
    private mutating func finishedIfGone(_ request: RequestID, now: MonotonicInstant, actions: inout PoolActions) -> Bool {
        if isShutDown {
            finish(request, into: &actions) { $0.outcome(.shutdown, at: now) }
            return true
        }
        if isWithdrawn(request) {
            finish(request, into: &actions) { $0.outcome(.withdrawn, at: now) }
            return true
        }
        return false
    }

    /// The request's outcome is final: it leaves the machine.
    private mutating func finish(_ request: RequestID, _ outcome: APNSOutcome, into actions: inout PoolActions) {
        let state = requests.remove(request)
        actions.finishes.append((state.batch, state.index, outcome))
    }

    /// The request's outcome, made from its state as it leaves the machine, is final.
    private mutating func finish(
        _ request: RequestID,
        into actions: inout PoolActions,
        outcome: (RequestState) -> APNSOutcome
    ) {
        let state = requests.remove(request)
        actions.finishes.append((state.batch, state.index, outcome(state)))
    }

    // MARK: Queue

    /// To the queue, unless its group was withdrawn (then it ends `withdrawn`, and false).
    @discardableResult
    private mutating func enqueue(
        _ request: RequestID,
        atFront: Bool = false,
        now: MonotonicInstant,
        actions: inout PoolActions
    ) -> Bool {
        if isShutDown {
            // A stream that ended while its connection drained after shutdown, and would go
            // again (a free resend, a token refresh): nothing is sent any more.
            finish(request, into: &actions) { $0.outcome(.shutdown, at: now) }
            return false
        }
        if isWithdrawn(request) {
            finish(request, into: &actions) { $0.outcome(.withdrawn, at: now) }
            return false
        }
        let options = requests[request].options
        if options.deadline != nil { queuedWithDeadline += 1 }
        if health.isHeld, requests[request].heldSince == nil { requests[request].heldSince = now }
        if atFront {
            queue.prepend(request, lane: options.lane)
        } else {
            queue.append(request, lane: options.lane)
        }
        return true
    }

    private func isWithdrawn(_ request: RequestID) -> Bool {
        Self.isWithdrawn(requests[request], from: withdrawnGroups)
    }

    private static func isWithdrawn(_ request: RequestState, from groups: Set<UInt64>) -> Bool {
        guard !groups.isEmpty, let group = request.options.group else { return false }
        return groups.contains(group)
    }

    private mutating func dequeue() -> RequestID {
        let request = queue.removeFirst()
        if requests[request].options.deadline != nil { queuedWithDeadline -= 1 }
        return request
    }

    private mutating func releaseRetries(now: MonotonicInstant, actions: inout PoolActions) {
        for request in takeRetrying(where: { $0.retryAt.map { $0 <= now } ?? true }) {
            enqueue(request, now: now, actions: &actions)
        }
    }

    /// Removes from the retry list, in order, the requests `take` picks (clearing their retry
    /// time), and keeps the earliest retry time of the rest.
    private mutating func takeRetrying(where take: (RequestState) -> Bool) -> [RequestID] {
        var kept: [RequestID] = []
        var taken: [RequestID] = []
        var earliest: MonotonicInstant?
        for request in retrying {
            if take(requests[request]) {
                requests[request].retryAt = nil
                taken.append(request)
            } else {
                kept.append(request)
                if let at = requests[request].retryAt, earliest.map({ at < $0 }) ?? true { earliest = at }
            }
        }
        retrying = kept
        earliestRetry = earliest
        return taken
    }

    /// Ends, with the outcome `end` gives, the queued requests it gives one for; the rest stay in
    /// order (and are counted again for the deadline sweep).
    private mutating func endQueued(into actions: inout PoolActions, _ end: (RequestState) -> APNSOutcome?) {
        var withDeadline = 0
        var ended: [(RequestID, APNSOutcome)] = []
        do {
            // A copy that shares the table's storage while the queue is filtered; it is gone
            // before `finish` changes the table, so nothing is copied.
            let table = requests
            queue.retain { request in
                let state = table[request]
                if let outcome = end(state) {
                    ended.append((request, outcome))
                    return false
                }
                if state.options.deadline != nil { withDeadline += 1 }
                return true
            }
        }
        queuedWithDeadline = withDeadline
        for (request, outcome) in ended { finish(request, outcome, into: &actions) }
    }

    /// Ends queued requests whose deadline passed (`expired`), and, for requests that waited in
    /// a hold, those whose expiration passed (`expired`) or that reached the hold limit (the last
    /// systemic answer, with how long they were held).
    private mutating func sweep(now: MonotonicInstant, actions: inout PoolActions) {
        guard queuedWithDeadline > 0 || health.isHeld else { return }
        let holdLimit = settings.health.holdLimit
        endQueued(into: &actions) { request in
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

    /// After every event: hand out what fits, then ask for the next tick if one is needed.
    private mutating func settle(_ actions: inout PoolActions, now: MonotonicInstant) {
        drain(&actions, now: now)
        var wanted = earliestRetry
        if queuedWithDeadline > 0 || health.isHeld {
            if nextSweep == nil { nextSweep = now + settings.sweepInterval }
            wanted = earlier(wanted, nextSweep)
        }
        if health.isHeld, !health.probeInFlight, !queue.isEmpty, let probeAt = health.nextProbeAt {
            wanted = earlier(wanted, probeAt)
        }
        if pacedOut, !queue.isEmpty, pace != nil {
            wanted = earlier(wanted, pace!.nextTokenAt(now: now))
        }
        if let wanted, tickAt.map({ wanted < $0 }) ?? true {
            tickAt = wanted
            actions.tick = wanted
        }
    }

    private func earlier(_ a: MonotonicInstant?, _ b: MonotonicInstant?) -> MonotonicInstant? {
        guard let a else { return b }
        guard let b else { return a }
        return min(a, b)
    }

    // MARK: Routing

    /// Moves queued requests to the connections with the most free capacity, reserving a slot
    /// for each, until the queue is empty or no connection has room. A held app sends one probe
    /// at a time, when its backoff allows.
    private mutating func drain(_ actions: inout PoolActions, now: MonotonicInstant) {
        pacedOut = false
        guard !isShutDown else { return }
        if !suspects.isEmpty && !health.isHeld { sendSuspects(&actions, now: now) }
        guard !queue.isEmpty else { return }
        if health.isHeld {
            guard health.mayProbe(now: now) else { return }
            while let head = queue.first, expired(head, now: now) {
                finish(dequeue(), requests[head].outcome(.expired, at: now), into: &actions)
            }
            guard !queue.isEmpty, let slot = slotForNext(), paced(now: now), capacities[slot].reserve() else { return }
            let probe = dequeue()
            requests[probe].isProbe = true
            health.probeSent()
            actions.sends.append((slot, [send(probe)]))
            return
        }
        if queue.count == 1 {
            // A job of one token: the same choice, without building per-connection batches.
            guard let slot = slotForNext(), paced(now: now), capacities[slot].reserve() else { return }
            let request = dequeue()
            if expired(request, now: now) {
                capacities[slot].release()
                finish(request, into: &actions) { $0.outcome(.expired, at: now) }
            } else {
                actions.sends.append((slot, [send(request)]))
            }
            return
        }
        var batches: [[OutgoingRequest]] = Array(repeating: [], count: capacities.count)
        while !queue.isEmpty {
            guard let best = slotForNext(), paced(now: now), capacities[best].reserve() else { break }
            let request = dequeue()
            if expired(request, now: now) {
                capacities[best].release()
                finish(request, into: &actions) { $0.outcome(.expired, at: now) }
                continue
            }
            if batches[best].isEmpty {
                // At most what is queued, or what the connection had free: one allocation.
                batches[best].reserveCapacity(min(queue.count + 1, capacities[best].available + 1))
            }
            batches[best].append(send(request))
        }
        actions.sends.reserveCapacity(actions.sends.count + batches.count { !$0.isEmpty })
        for (slot, batch) in batches.enumerated() where !batch.isEmpty {
            actions.sends.append((slot, batch))
        }
    }

    /// One suspect to each connection that has none on the wire and a free stream
    /// (`connectionRefused`), ahead of the queue.
    private mutating func sendSuspects(_ actions: inout PoolActions, now: MonotonicInstant) {
        for slot in capacities.indices where lifecycles[slot].acceptsRequests && capacities[slot].available > 0 {
            while let request = suspects.next(for: slot) {
                if expired(request, now: now) {
                    _ = suspects.ended(request, on: slot)
                    finish(request, into: &actions) { $0.outcome(.expired, at: now) }
                    continue
                }
                guard paced(now: now), capacities[slot].reserve() else {
                    suspects.putBack(request, from: slot)
                    return
                }
                actions.sends.append((slot, [send(request)]))
                break
            }
        }
    }

    /// Takes a pacing token for the next hand-out: true when the pool is not paced or one is
    /// there; false (and a tick for the next token) when the pace says wait. Called only once a
    /// connection has room, so a full pool does not burn tokens.
    private mutating func paced(now: MonotonicInstant) -> Bool {
        guard pace != nil else { return true }
        if pace!.take(now: now) { return true }
        pacedOut = true
        return false
    }

    /// A request leaves for a connection: the attempt counts from here (a connection that cannot
    /// start it reports `notStarted`, which takes the attempt back).
    private mutating func send(_ request: RequestID) -> OutgoingRequest {
        requests[request].attempts += 1
        return OutgoingRequest(id: request, batch: requests[request].batch, index: requests[request].index)
    }

    private func expired(_ request: RequestID, now: MonotonicInstant) -> Bool {
        requests[request].options.deadline.map { $0 <= now } ?? false
    }

    /// The connection for the request at the head of the queue: the one with the most free
    /// streams, or nil when none has room. A request that got 503 on a connection goes elsewhere
    /// when anywhere else has room.
    private func slotForNext() -> Int? {
        var best = -1
        var bestAvailable = 0
        for slot in capacities.indices where lifecycles[slot].acceptsRequests {
            let available = capacities[slot].available
            if available > bestAvailable {
                best = slot
                bestAvailable = available
            }
        }
        guard best >= 0 else { return nil }
        if let head = queue.first, let avoid = requests[head].avoidSlot, avoid == best {
            for slot in capacities.indices
            where slot != avoid && lifecycles[slot].acceptsRequests && capacities[slot].available > 0 {
                return slot
            }
        }
        return best
    }
}
