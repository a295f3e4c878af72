import Logging
import NIOCore
import NIOPosix
import PushlineAPNSCore
import PushlineTLS
import Synchronization

/// A pool of multiplexed HTTP/2 connections to APNs for one credential (one team and key, or one
/// certificate), honouring every stream limit.
///
/// Every decision is made by `PoolStateMachine`, held here under one lock: routing (a request
/// goes to the connection with the most free streams, never above the server's
/// SETTINGS_MAX_CONCURRENT_STREAMS), retries with backoff, token refresh, REFUSED_STREAM and
/// GOAWAY resends, and the app's systemic hold (hold, probe, resume). This class feeds it events
/// and performs the actions it returns, outside the lock. `send` always ends with exactly one
/// `APNSOutcome`.
///
/// No call cycle with the connections: what the machine decides about a connection that
/// reported is returned to it (`handle(slot:_:)` returns `ConnectionActions`), and what it
/// decides about any connection otherwise reaches that connection in a later turn of its event
/// loop (`perform(_:)`), never inside one of its calls.
public final class APNSClient: Sendable {
    public let configuration: APNSClientConfiguration
    let credential: APNSCredential
    let tokens: ProviderTokenSource?
    let metrics: APNSMetrics
    let logger: Logger
    let machine: Mutex<PoolStateMachine>
    private let connections: [PooledConnection]
    /// Which address each new connection goes to (`AddressSpread`), and how many are open on each.
    private let addresses: ConnectionAddresses
    /// The connections `start()` has yet to open (spaced out), cancelled by `shutdown()`.
    private let startsDue = Mutex<[Scheduled<Void>]>([])
    private let ownsGroup: Bool
    private let group: any EventLoopGroup
    /// Runs the machine's ticks (retries due, deadline sweeps, probes).
    private let timerLoop: any EventLoop
    /// Wraps each run of outcomes handed to observers, when given.
    private let outcomeScope: (any APNSOutcomeScope)?
    /// Called after the app is held and after a hold ends (`onHoldChange`), with whether it is held.
    let holdObservers = Mutex<[@Sendable (_ held: Bool) -> Void]>([])

    /// Creates the pool; call `start()` to open its connections.
    ///
    /// - Parameter group: event loops for the connections (spread round-robin); nil = a group of
    ///   one loop per core owned by the client.
    /// - Parameter outcomeScope: wraps each run of outcomes the client hands to its observers.
    public init(
        configuration: APNSClientConfiguration,
        credential: APNSCredential,
        group: (any EventLoopGroup)? = nil,
        logger: Logger = Logger(label: "pushline.apns"),
        outcomeScope: (any APNSOutcomeScope)? = nil
    ) throws {
        self.configuration = configuration
        self.outcomeScope = outcomeScope
        self.credential = credential
        var logger = logger
        logger[metadataKey: "app"] = "\(configuration.name)"
        self.logger = logger
        let metrics = APNSMetrics(app: configuration.name, maxRate: configuration.maxRate)
        self.metrics = metrics

        let tlsContext = try TLSContext.apns(endpoint: configuration.endpoint, caFile: configuration.caFile, credential: credential)

        if case .token(let keyID, let teamID, let key) = credential {
            tokens = ProviderTokenSource(keyID: keyID, teamID: teamID, key: key, now: configuration.now) {
                metrics.jwtRefreshed()
            }
        } else {
            tokens = nil
        }

        if let group {
            self.group = group
            ownsGroup = false
        } else {
            self.group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
            ownsGroup = true
        }
        timerLoop = self.group.next()
        machine = Mutex(
            PoolStateMachine(
                settings: .init(
                    connections: configuration.connections,
                    configuredCap: configuration.maxStreamsPerConnection,
                    tokenAuth: credential.isToken,
                    maxQueuedRequests: configuration.maxQueuedRequests,
                    retryPolicy: configuration.retryPolicy,
                    maxFreeResends: configuration.maxFreeResends,
                    health: configuration.health,
                    maxRate: configuration.maxRate
                ),
                now: .now
            )
        )

        addresses = ConnectionAddresses(resolver: configuration.resolver, app: configuration.name)
        let channelSetup = APNSChannelSetup(
            endpoint: configuration.endpoint,
            proxy: configuration.proxy,
            tlsContext: tlsContext,
            connectTimeout: configuration.connectTimeout,
            addresses: addresses,
            logger: logger
        )
        let settings = PooledConnection.Settings(
            channelSetup: channelSetup,
            requestTimeout: configuration.requestTimeout,
            pingInterval: configuration.pingInterval,
            pingTimeout: configuration.pingTimeout,
            closeTimeout: configuration.closeTimeout,
            authority: configuration.endpoint.authority,
            tokens: tokens,
            metrics: metrics,
            logger: logger
        )
        // Connections report to the pool through this box, filled once the pool exists; they hold
        // no reference to it.
        let sink = EventSink()
        let loops = self.group
        connections = (0..<configuration.connections).map { slot in
            PooledConnection(slot: slot, eventLoop: loops.next(), settings: settings) { slot, event in
                sink.client?.handle(slot: slot, event) ?? ConnectionActions()
            }
        }
        sink.client = self
    }

    /// Opens every connection (ahead of first use): the first at once, each next one
    /// `configuration.connectSpacing` after the one before. Returns at once; connections come up
    /// in the background and reconnect with backoff when they fail.
    public func start() {
        let spacing = configuration.connectSpacing
        for (index, connection) in connections.enumerated() {
            guard index > 0, spacing > .zero else {
                connection.eventLoop.execute { connection.perform(.connect) }
                continue
            }
            let due = connection.eventLoop.scheduleTask(in: TimeAmount(spacing * index)) { connection.perform(.connect) }
            startsDue.withLock { $0.append(due) }
        }
    }

    /// The pool's open connections per address of the endpoint's host (direct connections only).
    public var openConnectionsByAddress: [SocketAddress: Int] {
        addresses.openConnections
    }

    /// Sends one notification; `completion` is called exactly once, on an event loop, with the
    /// final outcome (after any retries).
    public func send(
        _ notification: APNSNotification,
        options: APNSSendOptions = APNSSendOptions(),
        completion: @escaping @Sendable (APNSOutcome) -> Void
    ) {
        submit(
            RequestBatch(
                notifications: [notification],
                options: options,
                created: .now,
                completion: .closure { _, outcome in completion(outcome) }
            )
        )
    }

    /// Sends many notifications in one hand-over (one lock, one hop per connection).
    public func send(
        _ notifications: [APNSNotification],
        options: APNSSendOptions = APNSSendOptions(),
        completion: @escaping @Sendable (Int, APNSOutcome) -> Void
    ) {
        guard !notifications.isEmpty else { return }
        // One immutable object for the whole batch (one payload buffer when the payloads are
        // equal, one completion closure); its requests are (batch, index).
        submit(RequestBatch(notifications: notifications, options: options, created: .now, completion: .closure(completion)))
    }

    /// Sends many notifications in one hand-over; `observer` hears each one's final outcome (as
    /// its index in `notifications`), and is what `cancel(where:)` sees of them.
    public func send(_ notifications: [APNSNotification], options: APNSSendOptions = APNSSendOptions(), observer: any APNSBatchObserver) {
        guard !notifications.isEmpty else { return }
        submit(
            RequestBatch(notifications: notifications, options: options, created: .now, completion: .observer(observer, firstIndex: 0))
        )
    }

    /// Sends the notifications of `batch` (one per token, sharing everything else) in one
    /// hand-over, with no object or string per notification: requests are (batch, index), and
    /// each header block is written from the batch's bytes. `completion` is called once per
    /// index, on an event loop, with its final outcome. An answer's `response.apnsID` is nil when
    /// APNs echoed the request's own id (`batch.ids.id(at: index)`), and the id it gave otherwise.
    public func send(
        _ batch: APNSNotificationBatch,
        options: APNSSendOptions = APNSSendOptions(),
        completion: @escaping @Sendable (Int, APNSOutcome) -> Void
    ) {
        guard batch.count > 0 else { return }
        submit(RequestBatch(batch: batch, options: options, created: .now, completion: .closure(completion)))
    }

    /// Sends several batches in one hand-over (one lock, one settling of the pool: the
    /// requests of many small jobs go out together), each telling its observer its outcomes.
    public func send(contentsOf submissions: consuming [APNSBatchSubmission]) {
        let now = MonotonicInstant.now
        // Made before the lock is taken, moving each submission's parts into its request batch:
        // popped from the end (iterating or indexing copied each one, a retain and a release of
        // every field), and the batches put back in order after, which moves references only
        // (reversing the submissions themselves moved every field of each, 0.8% of the worker).
        var batches: [RequestBatch] = []
        batches.reserveCapacity(submissions.count)
        while let submission = submissions.popLast() {
            guard submission.batch.count > 0 else { continue }
            batches.append(
                RequestBatch(
                    batch: submission.batch,
                    options: submission.options,
                    created: now,
                    completion: .observer(submission.observer, firstIndex: submission.firstIndex)
                )
            )
        }
        batches.reverse()
        perform(machine.withLock { $0.submit(batches, now: now) })
    }

    /// Sends one notification and waits for its outcome.
    public func send(_ notification: APNSNotification, options: APNSSendOptions = APNSSendOptions()) async -> APNSOutcome {
        await withCheckedContinuation { continuation in
            send(notification, options: options) { continuation.resume(returning: $0) }
        }
    }

    /// Closes every connection politely: each sends GOAWAY (no new streams), waits for its open
    /// streams to end (at most `configuration.closeTimeout`), then closes TCP; returns when all
    /// are closed. Requests the pool still holds (queued, waiting to retry, held) end at once as
    /// `shutdown`; requests in flight end with their answers, or as their streams fail.
    public func shutdown() async {
        for due in startsDue.withLock({ $0 }) { due.cancel() }
        perform(machine.withLock { $0.shutDown(now: .now) })
        await withTaskGroup(of: Void.self) { tasks in
            for connection in connections {
                tasks.addTask {
                    try? await connection.eventLoop.flatSubmit { connection.close() }.get()
                }
            }
        }
        if ownsGroup {
            try? await group.shutdownGracefully()
        }
    }

    /// Gives up the work of `groups` (`APNSSendOptions.group`): their requests that have not gone
    /// out end at once as `withdrawn`, and so do any that come back for another attempt later.
    /// With `onlyWhileHeld`, only if the app is held. Returns how many ended now.
    @discardableResult
    public func withdraw(groups: [UInt64], onlyWhileHeld: Bool = false) -> Int {
        let now = MonotonicInstant.now
        let actions = machine.withLock { $0.withdraw(groups: groups, onlyWhileHeld: onlyWhileHeld, now: now) }
        perform(actions)
        return actions.finishes.count
    }

    /// Ends the work `filter` picks that has not gone out (queued in either lane, held, waiting
    /// for pacing, waiting out a retry backoff) at once as `cancelled`, a final outcome; requests
    /// on the wire end with their answers, and any of them `filter` picks that would go again
    /// ends `cancelled` then (the pool keeps the latest filter for that). Costs one pass over
    /// the waiting requests, under the pool's lock; nothing per request sent. Returns how many
    /// ended now.
    @discardableResult
    public func cancel(where filter: @escaping APNSCancelFilter) -> Int {
        let now = MonotonicInstant.now
        let actions = machine.withLock { $0.cancel(where: filter, now: now) }
        perform(actions)
        return actions.finishes.count
    }

    // MARK: Events and actions

    private func submit(_ batch: RequestBatch) {
        let now = MonotonicInstant.now
        perform(machine.withLock { $0.submit(batch, now: now) })
    }

    /// One event from connection `slot`, under one lock. Returns what the pool decided for that
    /// connection, which carries it out itself; the rest is performed here (and what concerns
    /// other connections reaches them in a later turn of their event loops).
    func handle(slot: Int, _ event: ConnectionEvent) -> ConnectionActions {
        let now = MonotonicInstant.now
        var actions = machine.withLock { machine -> PoolActions in
            switch event {
            case .connectFailed: machine.connectFailed(slot: slot, now: now)
            case .connected(let peerLimit): machine.connected(slot: slot, peerLimit: peerLimit, now: now)
            case .peerLimitChanged(let limit): machine.peerLimitChanged(slot: slot, to: limit, now: now)
            case .goAway: machine.goAway(slot: slot, now: now)
            case .pingLost: machine.pingLost(slot: slot, now: now)
            case .closed: machine.closed(slot: slot, now: now)
            case .backoffElapsed: machine.backoffElapsed(slot: slot, now: now)
            case .streamsEnded(let ended): machine.streamsEnded(slot: slot, ended, now: now)
            case .notStarted(let ids, let unusable):
                machine.notStarted(slot: slot, ids, connectionUnusable: unusable, now: now)
            }
        }
        let mine = actions.take(slot: slot)
        perform(actions)
        return mine
    }

    private func tick() {
        let now = MonotonicInstant.now
        perform(machine.withLock { $0.tick(now: now) })
    }

    /// Performs what the machine decided, outside the lock. Connections get their part through
    /// their event loops (a hop even from that loop).
    private func perform(_ actions: PoolActions) {
        for transition in actions.transitions { log(transition) }
        if actions.heldRequests > 0 { metrics.requestsHeld(actions.heldRequests) }
        if actions.freeResends > 0 { metrics.freeResends(actions.freeResends) }
        for generation in actions.expiredTokens {
            // Mints a new token when the 20-minute rule allows; requests take the current one.
            _ = try? tokens?.expired(generation: generation)
        }
        // Always in a later turn of the connection's event loop, even from that loop: never
        // inside a call the connection is making (a report, or a completion it delivers).
        for (slot, action) in actions.connections {
            let connection = connections[slot]
            connection.eventLoop.execute { connection.perform(action) }
        }
        for (slot, requests) in actions.sends {
            connections[slot].deliver(requests)
        }
        if let at = actions.tick {
            let delay = at - MonotonicInstant.now
            timerLoop.scheduleTask(in: TimeAmount(max(delay, .zero))) { [weak self] in self?.tick() }
        }
        guard !actions.finishes.isEmpty else { return }
        if let outcomeScope {
            outcomeScope.withOutcomeRun { Self.tell(actions.finishes) }
        } else {
            Self.tell(actions.finishes)
        }
    }

    private static func tell(_ finishes: [(batch: RequestBatch, index: Int, outcome: APNSOutcome)]) {
        for (batch, index, outcome) in finishes {
            batch.ended(index, outcome: outcome)
        }
    }
}

/// The pool a connection reports to, set once after the pool is made.
///
/// `@unchecked Sendable`: `client` is written once, in `APNSClient.init`, before any connection
/// can report (connections start in `start()`); afterwards it is only read.
private final class EventSink: @unchecked Sendable {
    weak var client: APNSClient?
}
