import PushlineAPNSCore

/// What the pool does next with a request whose stream ended, as `PoolRequests` judged the
/// answer; `PoolStateMachine` carries it out (only it knows whether the pool shut down, and
/// owns the queue).
enum RequestNext {
    /// Nothing more here: it left the machine, or it waits as a suspect again.
    case done
    /// Its outcome is final.
    case finish(APNSOutcome)
    /// Back to the queue (at the front when it goes again at once).
    case queue(atFront: Bool)
    /// Back to the queue without counting the attempt, to wait in the app's hold.
    case hold
    /// Into the retry list, to go again at this time.
    case retry(at: MonotonicInstant)
}
