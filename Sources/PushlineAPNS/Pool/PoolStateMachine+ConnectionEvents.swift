import PushlineAPNSCore

/// The events of one connection's lifecycle (connecting, TLS up, the peer's stream limit,
/// GOAWAY, a lost PING, the close, the reconnect backoff): each is one `connectionStep` of that
/// connection's `PoolConnections` state, then the hand-out of what now fits.
extension PoolStateMachine {
    mutating func connectFailed(slot: Int, now: MonotonicInstant) -> PoolActions {
        connectionStep(slot, now: now, settles: false) { $0.connectFailed(slot, random: $1.unit()) }
    }

    /// TLS is up; `peerLimit` is the server's SETTINGS_MAX_CONCURRENT_STREAMS if it came already.
    mutating func connected(slot: Int, peerLimit: Int?, now: MonotonicInstant) -> PoolActions {
        connectionStep(slot, now: now) { connections, _ in connections.connected(slot, peerLimit: peerLimit) }
    }

    mutating func peerLimitChanged(slot: Int, to limit: Int, now: MonotonicInstant) -> PoolActions {
        connectionStep(slot, now: now) { connections, _ in
            connections.peerLimitChanged(slot, to: limit)
            return .none
        }
    }

    /// GOAWAY: no new streams here; the connection closes after its last one.
    mutating func goAway(slot: Int, now: MonotonicInstant) -> PoolActions {
        connectionStep(slot, now: now) { connections, _ in connections.stopUsing(slot) }
    }

    /// A PING went unanswered: the connection is abandoned at once.
    mutating func pingLost(slot: Int, now: MonotonicInstant) -> PoolActions {
        connectionStep(slot, now: now) { connections, _ in connections.pingLost(slot) }
    }

    /// The channel closed (its streams were reported ended before this).
    mutating func closed(slot: Int, now: MonotonicInstant) -> PoolActions {
        connectionStep(slot, now: now) { $0.closed(slot, random: $1.unit()) }
    }

    mutating func backoffElapsed(slot: Int, now: MonotonicInstant) -> PoolActions {
        connectionStep(slot, now: now, settles: false) { connections, _ in connections.backoffElapsed(slot) }
    }
}
