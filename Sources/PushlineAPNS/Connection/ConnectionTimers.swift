import NIOCore

/// A pooled connection's timers: the reconnect after a backoff, the PING every `pingInterval`
/// with its answer's deadline, the deadline sweep every 50 ms, and the bound of a polite close.
/// They decide nothing: each tells its owner when it fires.
///
/// `@unchecked Sendable`: every property is touched only on `eventLoop` (the connection's, where
/// its owner calls in and where the timers fire).
final class ConnectionTimers: @unchecked Sendable {
    /// How often the deadline sweep runs.
    static let sweepInterval = TimeAmount.milliseconds(50)

    private let eventLoop: any EventLoop
    private let pingInterval: TimeAmount
    private let pingTimeout: TimeAmount
    private let closeTimeout: TimeAmount
    private var reconnect: Scheduled<Void>?
    private var pingTask: RepeatedTask?
    private var pingDeadline: Scheduled<Void>?
    private var sweepTask: RepeatedTask?
    private var closeDeadline: Scheduled<Void>?

    init(eventLoop: any EventLoop, pingInterval: Duration, pingTimeout: Duration, closeTimeout: Duration) {
        self.eventLoop = eventLoop
        self.pingInterval = TimeAmount(pingInterval)
        self.pingTimeout = TimeAmount(pingTimeout)
        self.closeTimeout = TimeAmount(closeTimeout)
    }

    /// Calls `elapsed` after `delay`, replacing any reconnect already scheduled.
    func scheduleReconnect(after delay: Duration, _ elapsed: @escaping @Sendable () -> Void) {
        reconnect?.cancel()
        reconnect = eventLoop.scheduleTask(in: TimeAmount(delay), elapsed)
    }

    func cancelReconnect() {
        reconnect?.cancel()
        reconnect = nil
    }

    /// Every `pingInterval`, sends a PING (`ping` returns its answer, nil when there is no
    /// connection to ping) unless one is unanswered, and calls `lost` when one goes unanswered
    /// for `pingTimeout`.
    func startPinging(ping: @escaping @Sendable () -> EventLoopFuture<TimeAmount>?, lost: @escaping @Sendable () -> Void) {
        stopPinging()
        let timeout = pingTimeout
        pingTask = eventLoop.scheduleRepeatedTask(initialDelay: pingInterval, delay: pingInterval) { [weak self] _ in
            guard let self, self.pingDeadline == nil, let answer = ping() else { return }
            self.pingDeadline = self.eventLoop.scheduleTask(in: timeout) { [weak self] in
                self?.pingDeadline = nil
                lost()
            }
            answer.whenComplete { [weak self] _ in
                self?.pingDeadline?.cancel()
                self?.pingDeadline = nil
            }
        }
    }

    /// Stops the PINGs (and forgets one unanswered); the sweep goes on.
    func stopPinging() {
        pingTask?.cancel()
        pingTask = nil
        pingDeadline?.cancel()
        pingDeadline = nil
    }

    /// Calls `sweep` every 50 ms, replacing any sweep already running.
    func startSweeping(_ sweep: @escaping @Sendable () -> Void) {
        sweepTask?.cancel()
        sweepTask = eventLoop.scheduleRepeatedTask(initialDelay: Self.sweepInterval, delay: Self.sweepInterval) { _ in sweep() }
    }

    /// Stops the PINGs and the sweep (the connection closed), and the bound of its polite close.
    func connectionClosed() {
        stopPinging()
        sweepTask?.cancel()
        sweepTask = nil
        closeDeadline?.cancel()
        closeDeadline = nil
    }

    /// Calls `expired` `closeTimeout` from now, unless a close is bounded already.
    func boundClose(_ expired: @escaping @Sendable () -> Void) {
        guard closeDeadline == nil else { return }
        closeDeadline = eventLoop.scheduleTask(in: closeTimeout) { [weak self] in
            self?.closeDeadline = nil
            expired()
        }
    }
}
