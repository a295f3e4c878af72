import PushlineAPNSCore

/// What the pool's state machine asks its owner (`APNSClient`) to do, batched: everything one
/// event decided, performed after the lock is released.
struct PoolActions {
    /// Requests to send, each with a stream slot reserved on that connection (and its attempt
    /// counted).
    var sends: [(slot: Int, requests: [OutgoingRequest])] = []
    /// Requests whose outcome is final (they have left the machine): call the batch's completion.
    var finishes: [(batch: RequestBatch, index: Int, outcome: APNSOutcome)] = []
    /// Connection lifecycle steps (connect, close, reconnect later).
    var connections: [(slot: Int, action: ConnectionLifecycle.Action)] = []
    /// APNs reported the provider tokens of these generations expired: refresh if the 20-minute
    /// rule allows.
    var expiredTokens: [UInt16] = []
    /// Call `tick` at this time (earlier than any tick already asked for).
    var tick: MonotonicInstant?
    /// The app's hold started or ended (one log line each).
    var transitions: [AppHealth.Transition] = []
    /// Requests that got a systemic answer while the app was held, and went back to the queue.
    var heldRequests = 0
    /// Requests resent without counting an attempt (REFUSED_STREAM, GOAWAY, not sent).
    var freeResends = 0

    mutating func connection(_ slot: Int, _ action: ConnectionLifecycle.Action) {
        if action != .none { connections.append((slot, action)) }
    }
}
