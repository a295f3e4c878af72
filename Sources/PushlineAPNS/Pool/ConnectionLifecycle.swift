/// One pooled connection's life as a pure state machine: connecting, active, draining after GOAWAY
/// or PING loss, waiting to reconnect. The pool performs the actions it returns.
public struct ConnectionLifecycle: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        /// A connection attempt (DNS, TCP, TLS, HTTP/2 preface) is under way.
        case connecting
        /// Carrying requests.
        case active
        /// No new streams: waiting for answered streams to finish before closing.
        case draining
        /// Closed; reconnecting after a delay.
        case backingOff
        /// Shut down for good.
        case shutDown
    }

    public enum Action: Sendable, Hashable {
        case none
        /// Open a new connection now (re-resolving DNS).
        case connect
        /// Close politely: GOAWAY (no new streams), wait for the open streams to end (bounded by
        /// `APNSClientConfiguration.closeTimeout`), then close TCP.
        case close
        /// Close at once, with a GOAWAY written first if the connection still takes bytes: it is
        /// presumed dead (an unanswered PING), so its streams are not waited for.
        case abandon
        /// Wait this long, then call `backoffElapsed`.
        case scheduleReconnect(after: Duration)
    }

    public private(set) var state: State = .connecting
    private var backoff: ReconnectBackoff

    public init(backoff: ReconnectBackoff = ReconnectBackoff()) {
        self.backoff = backoff
    }

    /// Whether new requests may be routed here.
    public var acceptsRequests: Bool { state == .active }

    public mutating func connected() -> Action {
        guard state == .connecting else { return state == .shutDown ? .close : .none }
        state = .active
        backoff.reset()
        return .none
    }

    public mutating func connectFailed(random: Double) -> Action {
        guard state == .connecting else { return .none }
        state = .backingOff
        return .scheduleReconnect(after: backoff.nextDelay(random: random))
    }

    /// GOAWAY received, or a PING went unanswered: stop using the connection. With streams still
    /// open it drains; otherwise it closes at once.
    public mutating func stopUsing(openStreams: Int) -> Action {
        guard state == .active || state == .connecting else { return .none }
        state = .draining
        return openStreams == 0 ? .close : .none
    }

    /// A PING went unanswered: stop using the connection and abandon it at once.
    public mutating func pingLost() -> Action {
        guard state == .active || state == .connecting else { return .none }
        state = .draining
        return .abandon
    }

    /// A stream closed; a draining connection closes after its last one.
    public mutating func streamClosed(openStreams: Int) -> Action {
        state == .draining && openStreams == 0 ? .close : .none
    }

    /// The channel closed (for any reason). Unless shut down, reconnect after a delay; a
    /// connection that was healthy reconnects after the shortest one.
    public mutating func closed(random: Double) -> Action {
        switch state {
        case .shutDown, .backingOff:
            return .none
        case .connecting, .active, .draining:
            state = .backingOff
            return .scheduleReconnect(after: backoff.nextDelay(random: random))
        }
    }

    public mutating func backoffElapsed() -> Action {
        guard state == .backingOff else { return .none }
        state = .connecting
        return .connect
    }

    public mutating func shutDown() -> Action {
        let wasOpen = state == .active || state == .draining || state == .connecting
        state = .shutDown
        return wasOpen ? .close : .none
    }
}
