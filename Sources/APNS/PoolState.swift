import NIOCore

/// The pool's shared bookkeeping: per-connection lifecycle and stream capacity, and the FIFO of
/// requests waiting for a free stream. A value guarded by the pool's lock; every method is pure.
struct PoolState {
    var lifecycles: [ConnectionLifecycle]
    var capacities: [StreamCapacity]
    private(set) var queue = CircularBuffer<PendingRequest>(initialCapacity: 1024)
    /// Queued requests that carry a deadline: when none does, the expiry sweep has nothing to
    /// look at (and does not walk a queue of thousands ten times a second).
    private(set) var queuedWithDeadline = 0
    var isShutDown = false

    init(connections: Int, configuredCap: Int, tokenAuth: Bool) {
        lifecycles = Array(repeating: ConnectionLifecycle(), count: connections)
        capacities = Array(repeating: StreamCapacity(configuredCap: configuredCap, tokenAuth: tokenAuth), count: connections)
    }

    /// Adds requests to the back of the queue (new work) or the front (resends, which keep their turn).
    mutating func enqueue(_ requests: some Collection<PendingRequest>, atFront: Bool = false) {
        for request in requests where request.options.deadline != nil { queuedWithDeadline += 1 }
        if atFront {
            for request in requests.reversed() { queue.prepend(request) }
        } else {
            queue.append(contentsOf: requests)
        }
    }

    /// Removes and returns the queued requests whose deadline is at or before `now`.
    mutating func removeExpired(now: ContinuousClock.Instant) -> [PendingRequest] {
        guard queuedWithDeadline > 0,
            queue.contains(where: { $0.options.deadline.map { $0 <= now } ?? false })
        else { return [] }
        var expired: [PendingRequest] = []
        var kept = CircularBuffer<PendingRequest>(initialCapacity: queue.count)
        for request in queue {
            if let deadline = request.options.deadline, deadline <= now {
                expired.append(request)
            } else {
                kept.append(request)
            }
        }
        queue = kept
        queuedWithDeadline -= expired.count
        return expired
    }

    /// Empties the queue, returning what it held.
    mutating func removeAllQueued() -> [PendingRequest] {
        defer {
            queue.removeAll()
            queuedWithDeadline = 0
        }
        return Array(queue)
    }

    private mutating func dequeue() -> PendingRequest {
        let request = queue.removeFirst()
        if request.options.deadline != nil { queuedWithDeadline -= 1 }
        return request
    }

    /// Requests assigned to a connection, each with a reserved stream slot.
    typealias Assignments = [(slot: Int, requests: [PendingRequest])]

    /// Moves queued requests to the connections with the most free capacity, reserving a slot
    /// for each, until the queue is empty or no connection has room.
    mutating func drain() -> Assignments {
        guard !queue.isEmpty else { return [] }
        if queue.count == 1 {
            // A job of one token: the same choice, without building per-connection batches.
            guard let slot = slotForNext(), capacities[slot].reserve() else { return [] }
            return [(slot, [dequeue()])]
        }
        var batches: [[PendingRequest]] = Array(repeating: [], count: capacities.count)
        var assigned = 0
        while !queue.isEmpty {
            guard let best = slotForNext(), capacities[best].reserve() else { break }
            batches[best].append(dequeue())
            assigned += 1
        }
        guard assigned > 0 else { return [] }
        return batches.enumerated().compactMap { $0.element.isEmpty ? nil : ($0.offset, $0.element) }
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
        if let avoid = queue.first?.avoidSlot, avoid == best {
            for slot in capacities.indices where slot != avoid && lifecycles[slot].acceptsRequests && capacities[slot].available > 0 {
                return slot
            }
        }
        return best
    }

    /// Streams reserved on all connections plus requests waiting: what the pool holds.
    var inFlight: Int {
        capacities.reduce(0) { $0 + $1.reserved } + queue.count
    }
}
