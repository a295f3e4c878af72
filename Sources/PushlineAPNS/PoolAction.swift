import PushlineAPNSCore

/// What the pool's state machine asks its owner (`APNSClient`) to do, batched: everything one
/// event decided, performed after the lock is released.
struct PoolActions {
    /// Requests to send, each with a stream slot reserved on that connection.
    var sends: [(slot: Int, requests: [PendingRequest])] = []
    /// Requests whose outcome is final.
    var finishes: [(request: PendingRequest, outcome: APNSOutcome)] = []
    /// Connection lifecycle steps (connect, close, reconnect later).
    var connections: [(slot: Int, action: ConnectionLifecycle.Action)] = []
    /// APNs reported these provider tokens expired: refresh if the 20-minute rule allows.
    var expiredTokens: [String] = []
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

/// How one stream of a connection ended, as the connection reports it to the pool.
enum StreamEnd: Sendable {
    /// APNs answered.
    case response(APNSResponse)
    /// The server certainly did not process it (REFUSED_STREAM, above a GOAWAY's last stream,
    /// never sent): a free resend.
    case unprocessed
    /// The local request deadline passed and the stream was reset.
    case timedOut
    /// The connection failed or the server reset the stream: it may have been processed.
    case lost
}
