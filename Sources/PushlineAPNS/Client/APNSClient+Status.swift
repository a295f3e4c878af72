import Synchronization

/// The pool's state as its owner reads it for metrics and readiness: each connection's
/// lifecycle and streams, what waits, and whether the app is held (a snapshot under the lock).
extension APNSClient {
    /// A connection's state for metrics and readiness.
    public struct ConnectionStatus: Sendable, Hashable {
        public var state: ConnectionLifecycle.State
        public var limit: Int
        public var reservedStreams: Int
    }

    public struct Status: Sendable, Hashable {
        public var connections: [ConnectionStatus]
        /// Requests waiting for a stream: queued, held, or waiting out a retry backoff.
        public var queued: Int
        /// Why the app is held (systemic answers dominate), or nil.
        public var hold: AppHealth.Hold?
        /// Whether at least one connection is carrying requests.
        public var isReady: Bool { connections.contains { $0.state == .active } }
        /// Nothing waiting and no stream reserved: the pool holds no request.
        public var isIdle: Bool { queued == 0 && connections.allSatisfy { $0.reservedStreams == 0 } }
    }

    public func status() -> Status {
        machine.withLock { machine in
            Status(
                connections: machine.lifecycles.indices.map {
                    ConnectionStatus(
                        state: machine.lifecycles[$0].state,
                        limit: machine.capacities[$0].limit,
                        reservedStreams: machine.capacities[$0].reserved
                    )
                },
                queued: machine.waiting,
                hold: machine.health.hold
            )
        }
    }
}
