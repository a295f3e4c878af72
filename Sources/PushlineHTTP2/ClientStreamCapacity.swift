/// Whether a client connection admits new streams, and how many: the two facts nghttp2 cannot
/// answer, and the rule that combines them with what it can.
///
/// Kept here, because nghttp2 publishes neither:
/// - `announcedPeerLimit`: the peer's SETTINGS_MAX_CONCURRENT_STREAMS as last announced to the
///   delegate; nil until the peer's first SETTINGS (the limit is still the assumed one). It is
///   what the delegate has heard, kept to tell a change from a repeat, not the limit in force:
///   that one is nghttp2's (`nghttp2_session_get_remote_settings`), read whenever it is needed.
/// - `goAwayQueued`: `goAway()` queued our GOAWAY. nghttp2 holds back streams only once the
///   frame has left; the handler refuses them from the call on.
///
/// Asked each time instead (the handler passes them in): whether nghttp2 allows a new request
/// (`nghttp2_session_check_request_allowed`: not after a GOAWAY received, nor after one nghttp2
/// queued itself on a protocol error, nor once the stream ids are spent), the last-stream-id of
/// the GOAWAY received (`HTTP2ClientHandler.receivedGoAway`), whether the connection ended
/// (`NGHTTP2Output`), and the streams in flight (`ClientStreamTable.count`).
struct ClientStreamCapacity: Hashable {
    /// Why no new stream may open.
    enum Refusal: Hashable, CustomStringConvertible {
        case closed
        case goAwayReceived(lastStreamID: Int32)
        case goAwaySent
        case streamIDsExhausted

        var description: String {
            switch self {
            case .closed: "connection closed"
            case .goAwayReceived(let last): "GOAWAY received (last-stream-id \(last))"
            case .goAwaySent: "GOAWAY sent"
            case .streamIDsExhausted: "stream ids exhausted"
            }
        }
    }

    private(set) var announcedPeerLimit: Int?
    private(set) var goAwayQueued = false

    /// Why a new stream may not open now, or nil when it may. The GOAWAY received and the ids
    /// are asked of their owners only to name a refusal (a submit that goes through reads neither).
    func refusal(
        ended: Bool,
        requestAllowed: Bool,
        receivedGoAwayLastStreamID: @autoclosure () -> Int32?,
        streamIDsExhausted: @autoclosure () -> Bool
    ) -> Refusal? {
        if ended { return .closed }
        if requestAllowed && !goAwayQueued { return nil }
        if let last = receivedGoAwayLastStreamID() { return .goAwayReceived(lastStreamID: last) }
        if goAwayQueued { return .goAwaySent }
        // nghttp2 refuses without a GOAWAY of ours or the peer's: its ids are spent, or it
        // queued a GOAWAY itself (a protocol error) and is closing.
        return streamIDsExhausted() ? .streamIDsExhausted : .goAwaySent
    }

    /// How many more streams a pool may submit without making them wait inside the connection.
    static func availableStreams(peerLimit: Int, inFlight: Int, refusal: Refusal?) -> Int {
        refusal == nil ? max(0, peerLimit - inFlight) : 0
    }

    /// The peer's SETTINGS arrived and nghttp2 now applies `maxConcurrentStreams`; true when the
    /// delegate must hear of it (the first SETTINGS, or a changed value).
    mutating func peerSettingsApplied(maxConcurrentStreams: Int) -> Bool {
        defer { announcedPeerLimit = maxConcurrentStreams }
        return announcedPeerLimit != maxConcurrentStreams
    }

    /// `goAway()` was called; true the first time (only that call queues a frame).
    mutating func queueGoAway() -> Bool {
        defer { goAwayQueued = true }
        return !goAwayQueued
    }
}
