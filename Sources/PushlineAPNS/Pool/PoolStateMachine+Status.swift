/// What the machine holds, as the owner reads it for its status and metrics (and tests for
/// their checks): connection lifecycles and capacities, and how many requests wait where.
extension PoolStateMachine {
    var lifecycles: [ConnectionLifecycle] { connections.lifecycles }

    var capacities: [StreamCapacity] { connections.capacities }

    /// Requests waiting for a stream (queued, held, or waiting out a backoff).
    var waiting: Int { queue.count + requests.waiting }

    var queuedCount: Int { queue.count }

    /// Queued urgent requests (the rest are bulk).
    var queuedUrgent: Int { queue.lanes.count(of: .urgent) }

    /// Requests the machine holds, wherever they are (queued, in flight, waiting to retry, held).
    var requestCount: Int { requests.count }
}
