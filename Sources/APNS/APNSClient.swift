import APNSCore
import Logging
import NIOCore
import NIOOpenSSL
import NIOPosix
import Synchronization

/// A pool of multiplexed HTTP/2 connections to APNs for one credential (one team and key, or one
/// certificate), honouring every stream limit.
///
/// A request goes to the connection with the most free streams, where free = min(server's
/// SETTINGS_MAX_CONCURRENT_STREAMS, configured cap, 1 while a token connection is unproven) minus
/// streams reserved. With no free stream anywhere it waits in the pool's FIFO, never inside a
/// throttled connection. Retries (with backoff), token refresh, REFUSED_STREAM and GOAWAY resends
/// happen inside; `send` always ends with exactly one `APNSOutcome`.
public final class APNSClient: Sendable {
    public let configuration: APNSClientConfiguration
    let credential: APNSCredential
    let tlsContext: TLSContext
    let tokens: ProviderTokenSource?
    let metrics: APNSMetrics
    let logger: Logger
    /// The `:authority` of every request (formatted once, not per request).
    let authority: String
    private let state: Mutex<PoolState>
    private let connections: [PooledConnection]
    private let ownsGroup: Bool
    private let group: any EventLoopGroup
    private let sweeper = Mutex<RepeatedTask?>(nil)

    /// Creates the pool; call `start()` to open its connections.
    ///
    /// - Parameter group: event loops for the connections (spread round-robin); nil = a group of
    ///   one loop per core owned by the client.
    public init(
        configuration: APNSClientConfiguration,
        credential: APNSCredential,
        group: (any EventLoopGroup)? = nil,
        logger: Logger = Logger(label: "pushline.apns")
    ) throws {
        self.configuration = configuration
        self.credential = credential
        self.authority = configuration.endpoint.authority
        var logger = logger
        logger[metadataKey: "app"] = "\(configuration.name)"
        self.logger = logger
        let metrics = APNSMetrics(app: configuration.name)
        self.metrics = metrics

        var tls = TLSConfiguration.client(serverHostname: configuration.endpoint.host)
        if let caFile = configuration.caFile, !caFile.isEmpty {
            tls.trustRoots = .system(plusCAFile: caFile)
        }
        if case .certificate(let identity) = credential {
            tls.identity = identity
        }
        self.tlsContext = try TLSContext(configuration: tls)

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
        self.state = Mutex(
            PoolState(
                connections: configuration.connections,
                configuredCap: configuration.maxStreamsPerConnection,
                tokenAuth: credential.isToken))
        var connections: [PooledConnection] = []
        for slot in 0..<configuration.connections {
            connections.append(PooledConnection(slot: slot, eventLoop: self.group.next()))
        }
        self.connections = connections
        for connection in connections {
            connection.client = self
        }
    }

    /// Opens every connection (ahead of first use). Returns at once; connections come up in the
    /// background and reconnect with backoff when they fail.
    public func start() {
        for connection in connections {
            connection.eventLoop.execute { connection.connect() }
        }
        // Requests waiting in the queue (no connection up, or every stream busy) still end at
        // their deadline.
        let task = group.next().scheduleRepeatedTask(initialDelay: .milliseconds(100), delay: .milliseconds(100)) {
            [weak self] _ in
            self?.expireQueued()
        }
        sweeper.withLock { $0 = task }
    }

    private func expireQueued() {
        let now = ContinuousClock.now
        let expired = state.withLock { $0.removeExpired(now: now) }
        for request in expired {
            request.finish(noResponse: .expired)
        }
    }

    /// Sends one notification; `completion` is called exactly once, on an event loop, with the
    /// final outcome (after any retries).
    public func send(
        _ notification: APNSNotification,
        options: APNSSendOptions = APNSSendOptions(),
        completion: @escaping @Sendable (APNSOutcome) -> Void
    ) {
        enqueue([PendingRequest(notification: notification, options: options, index: 0) { _, outcome in completion(outcome) }])
    }

    /// Sends many notifications in one hand-over (one lock, one hop per connection).
    public func send(
        _ notifications: [APNSNotification],
        options: APNSSendOptions = APNSSendOptions(),
        completion: @escaping @Sendable (Int, APNSOutcome) -> Void
    ) {
        // Notifications of one job carry the same payload array: one buffer serves them all.
        var body: ByteBuffer?
        var bodySource: [UInt8] = []
        let requests = notifications.enumerated().map { index, notification in
            if body == nil || notification.payload != bodySource {
                bodySource = notification.payload
                body = ByteBuffer(bytes: bodySource)
            }
            // One completion closure for the whole batch; each request carries its index.
            return PendingRequest(notification: notification, options: options, body: body, index: index, completion: completion)
        }
        enqueue(requests)
    }

    /// Sends one notification and waits for its outcome.
    public func send(_ notification: APNSNotification, options: APNSSendOptions = APNSSendOptions()) async -> APNSOutcome {
        await withCheckedContinuation { continuation in
            send(notification, options: options) { continuation.resume(returning: $0) }
        }
    }

    /// Closes every connection; requests still queued or in flight end as `connection`.
    public func shutdown() async {
        sweeper.withLock { task in
            task?.cancel()
            task = nil
        }
        let queued: [PendingRequest] = state.withLock { state in
            state.isShutDown = true
            for slot in state.lifecycles.indices { _ = state.lifecycles[slot].shutDown() }
            return state.removeAllQueued()
        }
        for request in queued { request.finish(noResponse: .connection) }
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

    // MARK: Status

    /// A connection's state for metrics and readiness.
    public struct ConnectionStatus: Sendable, Hashable {
        public var state: ConnectionLifecycle.State
        public var limit: Int
        public var reservedStreams: Int
    }

    public struct Status: Sendable, Hashable {
        public var connections: [ConnectionStatus]
        public var queued: Int
        /// Whether at least one connection is carrying requests.
        public var isReady: Bool { connections.contains { $0.state == .active } }
    }

    public func status() -> Status {
        state.withLock { state in
            Status(
                connections: state.lifecycles.indices.map {
                    ConnectionStatus(
                        state: state.lifecycles[$0].state, limit: state.capacities[$0].limit,
                        reservedStreams: state.capacities[$0].reserved)
                },
                queued: state.queue.count)
        }
    }

    // MARK: Pool internals (called by connections)

    /// Queues requests (FIFO) and hands out what fits.
    func enqueue(_ requests: [PendingRequest], atFront: Bool = false) {
        var rejected: [PendingRequest] = []
        let assignments: PoolState.Assignments = state.withLock { state in
            if state.isShutDown {
                rejected = requests
                return []
            }
            let room = configuration.maxQueuedRequests - state.queue.count
            var accepted = requests
            if requests.count > room {
                accepted = Array(requests.prefix(max(0, room)))
                rejected = Array(requests.dropFirst(max(0, room)))
            }
            state.enqueue(accepted, atFront: atFront)
            return state.drain()
        }
        for request in rejected { request.finish(noResponse: .connection) }
        dispatch(assignments)
    }

    func dispatch(_ assignments: PoolState.Assignments) {
        for (slot, requests) in assignments {
            connections[slot].deliver(requests)
        }
    }

    /// Runs `body` on the pool state under the lock, then dispatches whatever the queue can now
    /// place, and returns `body`'s result.
    func withState<Result>(_ body: (inout PoolState) -> Result) -> Result {
        let (result, assignments) = state.withLock { state -> (Result, PoolState.Assignments) in
            let result = body(&state)
            return (result, state.drain())
        }
        dispatch(assignments)
        return result
    }

    /// A reserved slot that was not used (the connection turned out to be unable to take it).
    func unreserve(slot: Int, requeue requests: [PendingRequest]) {
        let assignments: PoolState.Assignments = state.withLock { state in
            for _ in requests { state.capacities[slot].release() }
            state.enqueue(requests, atFront: true)
            return state.drain()
        }
        dispatch(assignments)
    }
}
