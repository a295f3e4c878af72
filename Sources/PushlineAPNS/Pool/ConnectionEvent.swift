/// What a pooled connection reports to its pool; the pool answers with what it decided for that
/// connection (`ConnectionActions`).
enum ConnectionEvent: Sendable {
    case connectFailed
    /// TLS is up; the server's SETTINGS_MAX_CONCURRENT_STREAMS if it came already.
    case connected(peerLimit: Int?)
    case peerLimitChanged(Int)
    case goAway
    case pingLost
    case closed
    case backoffElapsed
    /// The streams that ended in one event-loop batch, in order.
    case streamsEnded([StreamEnded])
    /// Requests the pool assigned here that could not start.
    case notStarted([RequestID], connectionUnusable: Bool)
}
