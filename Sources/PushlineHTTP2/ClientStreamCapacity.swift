/// Stream accounting of one client connection, as a value: how many streams the peer allows,
/// how many of ours are in flight, and whether new streams may be opened at all.
///
/// Invariant: `inFlight` counts every submitted stream not yet answered, failed or cancelled,
/// including those nghttp2 still holds back because the peer's limit is reached; `open` counts
/// only those whose HEADERS went out. `availableStreams` is what a pool may still submit without
/// making requests wait inside this connection.
struct ClientStreamCapacity: Hashable {
    enum Phase: Hashable {
        case active
        case goAwayReceived(lastStreamID: Int32)
        case goAwaySent
        case closed
    }

    private(set) var phase: Phase = .active
    private(set) var peerMaxConcurrentStreams: Int
    private(set) var peerSettingsReceived = false
    private(set) var inFlight = 0
    private(set) var open = 0

    init(assumedPeerMaxConcurrentStreams: Int) {
        peerMaxConcurrentStreams = assumedPeerMaxConcurrentStreams
    }

    var availableStreams: Int {
        phase == .active ? max(0, peerMaxConcurrentStreams - inFlight) : 0
    }

    /// Why a new stream may not be submitted now, or nil when it may.
    var rejectionReason: String? {
        switch phase {
        case .active: nil
        case .goAwayReceived(let last): "GOAWAY received (last-stream-id \(last))"
        case .goAwaySent: "GOAWAY sent"
        case .closed: "connection closed"
        }
    }

    /// Records a submit; returns the rejection reason instead when the phase forbids new streams.
    mutating func submit() -> String? {
        if let reason = rejectionReason { return reason }
        inFlight += 1
        return nil
    }

    mutating func headersSent() { open += 1 }

    /// A stream left the table (answered, failed, cancelled). `wasSent`: its HEADERS went out.
    mutating func streamFinished(wasSent: Bool) {
        inFlight -= 1
        if wasSent { open -= 1 }
    }

    /// The peer's SETTINGS_MAX_CONCURRENT_STREAMS as nghttp2 now applies it; true when it changed
    /// or this is the peer's first SETTINGS (the assumed value becomes a known one).
    mutating func peerSettings(maxConcurrentStreams: Int) -> Bool {
        let first = !peerSettingsReceived
        peerSettingsReceived = true
        guard maxConcurrentStreams != peerMaxConcurrentStreams else { return first }
        peerMaxConcurrentStreams = maxConcurrentStreams
        return true
    }

    mutating func goAwayReceived(lastStreamID: Int32) {
        if phase != .closed { phase = .goAwayReceived(lastStreamID: lastStreamID) }
    }

    mutating func goAwaySent() {
        if phase == .active { phase = .goAwaySent }
    }

    mutating func closed() {
        phase = .closed
        inFlight = 0
        open = 0
    }
}
