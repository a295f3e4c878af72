/// The lifecycle of one TLS connection as `TLSHandler` sees it, without I/O: each event returns
/// what the handler must do.
///
///     idle --activate--> handshaking --handshakeCompleted--> active --close--> closing --> closed
///                              \______________________ failure / EOF ______________________/
struct TLSHandlerStateMachine: Sendable {
    enum State: Sendable, Hashable {
        /// Handler added, channel not active yet.
        case idle
        case handshaking
        /// Application data flows.
        case active
        /// Our close_notify is (being) sent; the channel closes once it is written.
        case closing
        case closed
    }

    private(set) var state: State = .idle
    /// A flush arrived during the handshake: send the buffered writes when it completes.
    private(set) var flushDeferred = false

    /// The channel became active (or the handler was added to an active channel).
    mutating func activate() -> Bool {
        guard state == .idle else { return false }
        state = .handshaking
        return true
    }

    enum InboundAction: Sendable, Hashable {
        case handshake
        case readApplicationData
        /// Nothing can use the bytes any more.
        case discard
    }

    mutating func ciphertextReceived() -> InboundAction {
        switch state {
        case .idle:
            // Bytes before channelActive cannot happen on a real socket; treat them as starting.
            state = .handshaking
            return .handshake
        case .handshaking:
            return .handshake
        case .active, .closing:
            // While closing, the peer's close_notify may still arrive and is read.
            return .readApplicationData
        case .closed:
            return .discard
        }
    }

    /// Returns whether buffered writes must be flushed now (a flush was requested during the handshake).
    mutating func handshakeCompleted() -> Bool {
        guard state == .handshaking else { return false }
        state = .active
        defer { flushDeferred = false }
        return flushDeferred
    }

    enum WriteAction: Sendable, Hashable {
        case buffer
        case fail
    }

    func write() -> WriteAction {
        switch state {
        case .idle, .handshaking, .active:
            return .buffer
        case .closing, .closed:
            return .fail
        }
    }

    enum FlushAction: Sendable, Hashable {
        case encryptAndFlush
        /// Before/during the handshake: remember, flush when it completes.
        case deferUntilHandshakeCompletes
        case ignore
    }

    mutating func flush() -> FlushAction {
        switch state {
        case .idle, .handshaking:
            flushDeferred = true
            return .deferUntilHandshakeCompletes
        case .active:
            return .encryptAndFlush
        case .closing, .closed:
            return .ignore
        }
    }

    enum CloseAction: Sendable, Hashable {
        /// Send pending writes, then close_notify, then close the channel once written.
        case sendCloseNotifyThenClose
        /// No TLS session to end: close the channel now.
        case closeNow
        /// A close is already under way: complete this promise with it.
        case joinClose
    }

    mutating func closeRequested() -> CloseAction {
        switch state {
        case .idle, .handshaking:
            state = .closed
            return .closeNow
        case .active:
            state = .closing
            return .sendCloseNotifyThenClose
        case .closing:
            return .joinClose
        case .closed:
            return .closeNow
        }
    }

    enum CloseNotifyAction: Sendable, Hashable {
        /// The peer started closing: answer with our close_notify and close.
        case replyThenClose
        /// We started: our close_notify is out; nothing more to send.
        case alreadyClosing
    }

    mutating func closeNotifyReceived() -> CloseNotifyAction {
        switch state {
        case .idle, .handshaking, .active:
            state = .closing
            return .replyThenClose
        case .closing, .closed:
            return .alreadyClosing
        }
    }

    enum FailureAction: Sendable, Hashable {
        case fireErrorAndClose
        /// Already closed: the error has no one left to tell.
        case ignore
    }

    mutating func failed() -> FailureAction {
        switch state {
        case .closed:
            return .ignore
        case .idle, .handshaking, .active, .closing:
            state = .closed
            return .fireErrorAndClose
        }
    }

    enum InactiveAction: Sendable, Hashable {
        /// TCP ended with the TLS session still open: fire `TLSError.uncleanShutdown`.
        case uncleanShutdown
        case clean
    }

    mutating func channelInactive() -> InactiveAction {
        defer { state = .closed }
        switch state {
        case .handshaking, .active:
            return .uncleanShutdown
        case .idle, .closing, .closed:
            return .clean
        }
    }
}
