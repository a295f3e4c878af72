import NIOCore

/// The pool's shared bookkeeping: per-connection lifecycle and stream capacity, and the FIFO of
/// requests waiting for a free stream. A value guarded by the pool's lock; every method is pure.
struct PoolState {
    var lifecycles: [ConnectionLifecycle]
    var capacities: [StreamCapacity]
    var queue = CircularBuffer<PendingRequest>(initialCapacity: 1024)
    var isShutDown = false

    init(connections: Int, configuredCap: Int, tokenAuth: Bool) {
        lifecycles = Array(repeating: ConnectionLifecycle(), count: connections)
        capacities = Array(repeating: StreamCapacity(configuredCap: configuredCap, tokenAuth: tokenAuth), count: connections)
    }

    /// Requests assigned to a connection, each with a reserved stream slot.
    typealias Assignments = [(slot: Int, requests: [PendingRequest])]

    /// Moves queued requests to the connections with the most free capacity, reserving a slot
    /// for each, until the queue is empty or no connection has room.
    mutating func drain() -> Assignments {
        guard !queue.isEmpty else { return [] }
        var batches: [[PendingRequest]] = Array(repeating: [], count: capacities.count)
        var assigned = 0
        while !queue.isEmpty {
            var best = -1
            var bestAvailable = 0
            for slot in capacities.indices where lifecycles[slot].acceptsRequests {
                let available = capacities[slot].available
                if available > bestAvailable {
                    best = slot
                    bestAvailable = available
                }
            }
            guard best >= 0 else { break }
            // A request that got 503 on a connection goes elsewhere when anywhere else has room.
            if let avoid = queue.first?.avoidSlot, avoid == best {
                for slot in capacities.indices where slot != avoid && lifecycles[slot].acceptsRequests && capacities[slot].available > 0 {
                    best = slot
                    break
                }
            }
            guard capacities[best].reserve() else { break }
            batches[best].append(queue.removeFirst())
            assigned += 1
        }
        guard assigned > 0 else { return [] }
        return batches.enumerated().compactMap { $0.element.isEmpty ? nil : ($0.offset, $0.element) }
    }

    /// Streams reserved on all connections plus requests waiting: what the pool holds.
    var inFlight: Int {
        capacities.reduce(0) { $0 + $1.reserved } + queue.count
    }
}
