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
/// The machine is made of values with one role each, as swift-nio-http2's connection state
/// machine is: `PoolRequests` (every request's state, retries, suspects, and what an answer
/// means for a request), `PoolQueue` (the queue, withdrawn groups, the deadline sweep, and the
/// hand-out to connections), `PoolConnections` (lifecycles, stream capacities, the choice of
/// connection), `AppHealth` (hold and probes) and `Pacing`. The machine routes each event to
/// them and carries out what they decide about a request (`RequestNext`).
///
/// A request itself is immutable (a `RequestBatch` and an index); connections get
/// `OutgoingRequest`s and answer with plain values (`StreamEnded`), so nothing the machine
/// decides on is written by anyone else. Every request the machine accepted ends in exactly one
/// `finishes` entry: requests queued, waiting to retry or held are the machine's, and
/// `shutDown` finishes them.
struct PoolStateMachine {
    enum Phase {
        /// Taking requests and sending them.
        case running
        /// Shut down for good: nothing is sent any more, and every request ends `shutdown`.
        case shutDown
    }

    let settings: Settings
    private(set) var phase = Phase.running
    private(set) var connections: PoolConnections
    private(set) var requests: PoolRequests
    private(set) var queue: PoolQueue
    private(set) var health: AppHealth
    private var pacing: Pacing
    private var random: SplitMix64
    /// The tick the owner has been asked for and that has not come yet.
    private var tickAt: MonotonicInstant?
    /// What the owner cancelled (`cancel(where:)`, the latest filter): a request it matches that
    /// would go again (a retry, a resend, a hold) ends `cancelled` instead. Nil until a cancel.
    private var cancelled: APNSCancelFilter?

    init(settings: Settings, now: MonotonicInstant) {
        self.settings = settings
        let count = max(1, settings.connections)
        connections = PoolConnections(count: count, configuredCap: settings.configuredCap, tokenAuth: settings.tokenAuth)
        requests = PoolRequests(
            connections: count,
            retryPolicy: settings.retryPolicy,
            maxFreeResends: settings.maxFreeResends,
            tokenAuth: settings.tokenAuth
        )
        queue = PoolQueue(sweepInterval: settings.sweepInterval, holdLimit: settings.health.holdLimit)
        health = AppHealth(thresholds: settings.health, origin: now)
        pacing = Pacing(rate: settings.maxRate, now: now)
        random = SplitMix64(seed: settings.seed)
    }

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
        if phase == .running { settle(&actions, now: now) }
        return actions
    }

    /// Queues a batch's requests while the queue has room; the rest end at once (`connection`),
    /// and all of them after shutdown (`shutdown`).
    private mutating func admit(_ batch: RequestBatch, now: MonotonicInstant, actions: inout PoolActions) {
        let room = phase == .shutDown ? 0 : max(0, settings.maxQueuedRequests - waiting)
        let refusal: APNSOutcome.NoResponse = phase == .shutDown ? .shutdown : .connection
        for index in 0..<batch.count {
            if index < room {
                enqueue(requests.insert(RequestState(batch: batch, index: index)), now: now, actions: &actions)
            } else {
                actions.finishes.append((batch, index, RequestState(batch: batch, index: index).outcome(refusal, at: now)))
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
        for (position, stream) in ended.enumerated() {
            connections.release(slot)
            if case .response(let response) = stream.end, response.status == 200 {
                successes += 1
                if requests.streamEnded(stream, on: slot).wasProbe { probeSucceeded = true }
                requests.finish(stream.id, into: &actions) { $0.outcome(response, at: now) }
            } else {
                others.append(position)
            }
        }
        if successes > 0 {
            // A 200 proves the provider token: the connection stops probing with one stream.
            connections.succeeded(slot)
            health.recordNotificationLevel(successes, now: now)
        }
        if probeSucceeded, let transition = health.probeSucceeded(now: now) { actions.transitions.append(transition) }
        var refused: [(request: RequestID, wasSuspect: Bool)] = []
        for position in others {
            let stream = ended[position]
            let (wasProbe, wasSuspect) = requests.streamEnded(stream, on: slot)
            switch stream.end {
            case .connectionError:
                if wasProbe { health.probeReturned() }
                refused.append((stream.id, wasSuspect))
                continue
            case .response(let response):
                // Any answer but an authentication failure proves the provider token too (a 410
                // or a 400 is as good as a 200).
                let status = response.status
                if status < 500 && status != 403 && status != 429 { connections.succeeded(slot) }
            default:
                break
            }
            let next = requests.ended(
                stream,
                on: slot,
                wasProbe: wasProbe,
                wasSuspect: wasSuspect,
                health: &health,
                queued: queue.lanes,
                random: &random,
                now: now,
                actions: &actions
            )
            carryOut(next, for: stream.id, now: now, actions: &actions)
        }
        if !refused.isEmpty { connectionRefused(refused, now: now, actions: &actions) }
        actions.connection(slot, connections.streamClosed(slot))
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
            connections.release(slot)
            if requests.notStarted(request) { health.probeReturned() }
        }
        if connectionUnusable { actions.connection(slot, connections.stopUsing(slot)) }
        // In their order, ahead of what was queued behind them (a suspect, ahead of the suspects).
        for request in ids.reversed() {
            if finishedIfCancelled(request, now: now, actions: &actions) {
                _ = requests.suspects.ended(request, on: slot)
            } else if requests.suspects.inFlight(on: slot) == request {
                requests.suspects.putBack(request, from: slot)
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
        for request in requests.takeDueRetries(now: now) { enqueue(request, now: now, actions: &actions) }
        queue.sweepIfDue(held: health.isHeld, requests: &requests, now: now, actions: &actions)
        settle(&actions, now: now)
        return actions
    }

    /// Shut down for good: every connection closes politely (GOAWAY, its open streams end, then
    /// TCP), and every request the machine holds ends (`shutdown`: not final for the worker,
    /// which leaves such jobs to the group's next owner). Requests in flight end with their
    /// answers, or as their streams fail; none is sent again.
    mutating func shutDown(now: MonotonicInstant) -> PoolActions {
        var actions = PoolActions()
        guard phase == .running else { return actions }
        phase = .shutDown
        for slot in connections.indices { actions.connection(slot, connections.shutDown(slot)) }
        for request in queue.removeAll() + requests.takeAllWaiting() {
            requests.finish(request, into: &actions) { $0.outcome(.shutdown, at: now) }
        }
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
        queue.withdraw(groups, requests: &requests, now: now, actions: &actions)
        let withdrawn = queue.withdrawnGroups
        for request in requests.takeRetrying(where: { PoolQueue.isWithdrawn($0, from: withdrawn) }) {
            requests.finish(request, into: &actions) { $0.outcome(.withdrawn, at: now) }
        }
        let withdrawnSuspects = requests.suspects.removeWaiting { [requests] in
            PoolQueue.isWithdrawn(requests[$0], from: withdrawn)
        }
        for request in withdrawnSuspects {
            requests.finish(request, into: &actions) { $0.outcome(.withdrawn, at: now) }
        }
        settle(&actions, now: now)
        return actions
    }

    /// The owner cancelled work (the worker: a campaign or a job): the requests `filter` matches
    /// that have not gone out (queued in either lane, held, waiting for a pacing token, waiting
    /// out a retry backoff, waiting suspects) end at once as `cancelled`; requests on the wire end
    /// with their answers, but any of them `filter` matches that would go again (a retry, a free
    /// resend, a wait in the hold) ends `cancelled` instead. `filter` is kept for that (the
    /// latest replaces the one before), and runs under the pool's lock: only here and on those
    /// rare returns, never per request sent.
    mutating func cancel(where filter: @escaping APNSCancelFilter, now: MonotonicInstant) -> PoolActions {
        var actions = PoolActions()
        cancelled = filter
        guard phase == .running else { return actions }
        queue.cancel(requests: &requests, now: now, actions: &actions) { Self.matches($0, filter) }
        for request in requests.takeRetrying(where: { Self.matches($0, filter) }) {
            requests.finish(request, into: &actions) { $0.outcome(.cancelled, at: now) }
        }
        let cancelledSuspects = requests.suspects.removeWaiting { [requests] in Self.matches(requests[$0], filter) }
        for request in cancelledSuspects {
            requests.finish(request, into: &actions) { $0.outcome(.cancelled, at: now) }
        }
        settle(&actions, now: now)
        return actions
    }

    /// Whether `filter` matches `request`: the key its batch's observer gives the index it hears
    /// the request as (requests with a completion closure, or without a key, are never matched).
    static func matches(_ request: RequestState, _ filter: APNSCancelFilter) -> Bool {
        guard case .observer(let observer, let firstIndex) = request.batch.completion,
            let key = observer.cancelKey(firstIndex + request.index)
        else { return false }
        return filter(key)
    }

    // MARK: Connections

    /// One step of `slot`'s lifecycle (`step` may draw from the machine's random numbers), then,
    /// when it `settles`, the hand-out of what now fits.
    mutating func connectionStep(
        _ slot: Int,
        now: MonotonicInstant,
        settles: Bool = true,
        _ step: (inout PoolConnections, inout SplitMix64) -> ConnectionLifecycle.Action
    ) -> PoolActions {
        var actions = PoolActions()
        actions.connection(slot, step(&connections, &random))
        if settles { settle(&actions, now: now) }
        return actions
    }

    // MARK: Carrying out

    /// Does with `request` what `PoolRequests` decided after its stream ended.
    private mutating func carryOut(_ next: RequestNext, for request: RequestID, now: MonotonicInstant, actions: inout PoolActions) {
        switch next {
        case .done:
            break
        case .finish(let outcome):
            requests.finish(request, outcome, into: &actions)
        case .queue(let atFront):
            if !finishedIfCancelled(request, now: now, actions: &actions) {
                enqueue(request, atFront: atFront, now: now, actions: &actions)
            }
        case .hold:
            if !finishedIfCancelled(request, now: now, actions: &actions), enqueue(request, now: now, actions: &actions) {
                actions.heldRequests += 1
            }
        case .retry(let time):
            if !finishedIfGone(request, now: now, actions: &actions) { requests.scheduleRetry(request, at: time) }
        }
    }

    /// The server ended `slot`'s connection with an error one request's bytes can cause while
    /// `inFlight` were unanswered: a suspect that was on the wire alone among suspects is the
    /// request at fault; the others become suspects (`PoolRequests.becomeSuspect`).
    private mutating func connectionRefused(
        _ inFlight: [(request: RequestID, wasSuspect: Bool)],
        now: MonotonicInstant,
        actions: inout PoolActions
    ) {
        for (request, wasSuspect) in inFlight {
            if wasSuspect {
                requests.finish(request, into: &actions) { $0.outcome(.protocolError, at: now) }
            } else if !finishedIfGone(request, now: now, actions: &actions) {
                requests.becomeSuspect(request, health: &health, queued: queue.lanes, now: now, actions: &actions)
            }
        }
    }

    /// Ends a request that is not to go again because the pool shut down (`shutdown`), its
    /// group was withdrawn (`withdrawn`) or the owner cancelled it (`cancelled`); false when it
    /// may go again.
    private mutating func finishedIfGone(_ request: RequestID, now: MonotonicInstant, actions: inout PoolActions) -> Bool {
        let outcome: APNSOutcome.NoResponse
        if phase == .shutDown {
            outcome = .shutdown
        } else if queue.isWithdrawn(requests[request]) {
            outcome = .withdrawn
        } else if let cancelled, Self.matches(requests[request], cancelled) {
            outcome = .cancelled
        } else {
            return false
        }
        requests.finish(request, into: &actions) { $0.outcome(outcome, at: now) }
        return true
    }

    /// Ends a request that would go again when the owner cancelled it (`cancel(where:)`); false
    /// otherwise (and always before any cancel).
    private mutating func finishedIfCancelled(_ request: RequestID, now: MonotonicInstant, actions: inout PoolActions) -> Bool {
        guard let cancelled, Self.matches(requests[request], cancelled) else { return false }
        requests.finish(request, into: &actions) { $0.outcome(.cancelled, at: now) }
        return true
    }

    /// To the queue, unless the pool shut down or its group was withdrawn (then it ends, and
    /// false).
    @discardableResult
    private mutating func enqueue(
        _ request: RequestID,
        atFront: Bool = false,
        now: MonotonicInstant,
        actions: inout PoolActions
    ) -> Bool {
        if phase == .shutDown {
            // A stream that ended while its connection drained after shutdown, and would go
            // again (a free resend, a token refresh): nothing is sent any more.
            requests.finish(request, into: &actions) { $0.outcome(.shutdown, at: now) }
            return false
        }
        return queue.enqueue(request, atFront: atFront, requests: &requests, held: health.isHeld, now: now, actions: &actions)
    }

    /// After every event: hand out what fits, then ask for the next tick if one is needed.
    private mutating func settle(_ actions: inout PoolActions, now: MonotonicInstant) {
        pacing.handOutStarts()
        if phase == .running {
            queue.drain(
                connections: &connections,
                requests: &requests,
                health: &health,
                pacing: &pacing,
                now: now,
                actions: &actions
            )
        }
        var wanted = requests.earliestRetry
        wanted = earlier(wanted, queue.sweepWanted(held: health.isHeld, now: now))
        if health.isHeld, !health.probeInFlight, !queue.isEmpty, let probeAt = health.nextProbeAt {
            wanted = earlier(wanted, probeAt)
        }
        if !queue.isEmpty { wanted = earlier(wanted, pacing.tickWanted(now: now)) }
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
}
