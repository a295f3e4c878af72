/// The pool's connections as the pool machine sees them, by slot: each one's lifecycle
/// (`ConnectionLifecycle`: connecting, active, draining, backing off) and stream capacity
/// (`StreamCapacity`: the server's limit, probing, streams reserved), and the choice of the
/// connection the next request goes to. A value owned by `PoolStateMachine`; no I/O. The
/// lifecycle steps it returns are the actions the pool's owner performs.
struct PoolConnections {
    let tokenAuth: Bool
    private(set) var lifecycles: [ConnectionLifecycle]
    private(set) var capacities: [StreamCapacity]

    init(count: Int, configuredCap: Int, tokenAuth: Bool) {
        self.tokenAuth = tokenAuth
        lifecycles = Array(repeating: ConnectionLifecycle(), count: count)
        capacities = Array(
            repeating: StreamCapacity(configuredCap: configuredCap, tokenAuth: tokenAuth),
            count: count
        )
    }

    var indices: Range<Int> { capacities.indices }

    /// Whether `slot` takes new requests and has a free stream.
    func hasRoom(_ slot: Int) -> Bool {
        lifecycles[slot].acceptsRequests && capacities[slot].available > 0
    }

    func available(_ slot: Int) -> Int { capacities[slot].available }

    // MARK: Streams

    /// Reserves a stream on `slot` for a request about to be sent; false when none is free.
    mutating func reserve(_ slot: Int) -> Bool { capacities[slot].reserve() }

    /// A stream reserved on `slot` ended (or its request never started).
    mutating func release(_ slot: Int) { capacities[slot].release() }

    /// A request on `slot` proved the provider token: it stops probing with one stream.
    mutating func succeeded(_ slot: Int) { capacities[slot].succeeded() }

    /// A stream on `slot` closed: a draining connection closes after its last one.
    mutating func streamClosed(_ slot: Int) -> ConnectionLifecycle.Action {
        lifecycles[slot].streamClosed(openStreams: capacities[slot].reserved)
    }

    // MARK: Lifecycle

    mutating func connectFailed(_ slot: Int, random: Double) -> ConnectionLifecycle.Action {
        lifecycles[slot].connectFailed(random: random)
    }

    /// TLS is up; `peerLimit` is the server's SETTINGS_MAX_CONCURRENT_STREAMS if it came already.
    mutating func connected(_ slot: Int, peerLimit: Int?) -> ConnectionLifecycle.Action {
        capacities[slot].reconnected(tokenAuth: tokenAuth)
        if let peerLimit { capacities[slot].peerLimitChanged(peerLimit) }
        return lifecycles[slot].connected()
    }

    mutating func peerLimitChanged(_ slot: Int, to limit: Int) {
        capacities[slot].peerLimitChanged(limit)
    }

    /// GOAWAY, or requests it could not start: no new streams on `slot`; it closes after its
    /// last one.
    mutating func stopUsing(_ slot: Int) -> ConnectionLifecycle.Action {
        lifecycles[slot].stopUsing(openStreams: capacities[slot].reserved)
    }

    mutating func pingLost(_ slot: Int) -> ConnectionLifecycle.Action {
        lifecycles[slot].pingLost()
    }

    mutating func closed(_ slot: Int, random: Double) -> ConnectionLifecycle.Action {
        lifecycles[slot].closed(random: random)
    }

    mutating func backoffElapsed(_ slot: Int) -> ConnectionLifecycle.Action {
        lifecycles[slot].backoffElapsed()
    }

    mutating func shutDown(_ slot: Int) -> ConnectionLifecycle.Action {
        lifecycles[slot].shutDown()
    }

    // MARK: Routing

    /// The connection for the next request: the one with the most free streams, or nil when none
    /// has room. A request that got 503 on a connection (`avoiding`) goes elsewhere when anywhere
    /// else has room.
    func slotForNext(avoiding avoid: Int?) -> Int? {
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
        if let avoid, avoid == best {
            for slot in capacities.indices where slot != avoid && hasRoom(slot) {
                return slot
            }
        }
        return best
    }
}
