import PushlineAPNSCore

/// How one stream ended, as a connection reports it to the pool: plain values, no shared object.
struct StreamEnded: Sendable {
    /// The request the stream carried (`OutgoingRequest.id`).
    var id: RequestID
    /// When the connection sent it.
    var sentAt: MonotonicInstant
    /// The provider token's generation the request carried (`ProviderTokenSource`; 0 with a
    /// certificate or when none was sent).
    var tokenGeneration: UInt16
    var end: StreamEnd
}
