/// `ProducerCore`'s shared state as a value: whether the producer runs, stops or has stopped (and
/// who waits for the stop), the flushes asked of the poll thread, and the tasks waiting for room in
/// librdkafka's queue. The core keeps it under its condition, performs the flushes and resumes the
/// waiters the events hand back; generic over the waiters so that tests drive it with plain values
/// (`ProducerStateTests`).
struct ProducerState<FlushWaiter, Waiter> {
    enum Phase {
        case running
        /// A stop was asked for; `waiters` wait for the poll thread to end.
        case stopping(waiters: [Waiter])
        /// The poll thread ended: nothing is produced or flushed any more.
        case stopped
    }

    /// A flush asked of the poll thread.
    struct Flush {
        var timeout: Duration
        var waiter: FlushWaiter
    }

    /// What the poll thread does in its next turn: these flushes, then stop or poll.
    struct Turn {
        var flushes: [Flush]
        var stop: Bool
    }

    /// What the poll thread's end hands back: flushes never performed (they fail), and every
    /// task waiting for the stop or for room (they are resumed).
    struct Ended {
        var flushes: [Flush]
        var stopWaiters: [Waiter]
        var roomWaiters: [Waiter]
    }

    private(set) var phase = Phase.running
    private var flushes: [Flush] = []
    /// Tasks waiting for the queue to shrink: resumed after the next poll that served delivery
    /// reports, or at the stop.
    private var roomWaiters: [Waiter] = []

    var isStopped: Bool {
        if case .stopped = phase { return true }
        return false
    }

    /// A flush for the poll thread's next turn; false when the producer has stopped (the caller
    /// answers at once).
    mutating func flush(timeout: Duration, waiter: FlushWaiter) -> Bool {
        guard !isStopped else { return false }
        flushes.append(Flush(timeout: timeout, waiter: waiter))
        return true
    }

    /// Asks the poll thread to stop, with nobody waiting (the producer's deinit).
    mutating func requestStop() {
        if case .running = phase { phase = .stopping(waiters: []) }
    }

    /// Asks the poll thread to stop; `waiter` waits for its end. False when it has ended already
    /// (the caller resumes `waiter` at once).
    mutating func stop(waiter: Waiter) -> Bool {
        switch phase {
        case .running: phase = .stopping(waiters: [waiter])
        case .stopping(let waiters): phase = .stopping(waiters: waiters + [waiter])
        case .stopped: return false
        }
        return true
    }

    /// `waiter` waits for room in librdkafka's queue, which holds `outstanding` records; false
    /// when there is room, or never will be any more (the caller resumes it at once). A report
    /// served after this look cannot be missed: the poll thread takes the waiters (`served`) under
    /// the same lock after it served reports.
    mutating func waitForRoom(waiter: Waiter, outstanding: Int) -> Bool {
        guard !isStopped, outstanding > 0 else { return false }
        roomWaiters.append(waiter)
        return true
    }

    /// The poll thread served delivery reports: the tasks waiting for room, to resume.
    mutating func served() -> [Waiter] {
        defer { roomWaiters = [] }
        return roomWaiters
    }

    /// The poll thread's next turn: the flushes asked for since the last, and whether to stop.
    mutating func nextTurn() -> Turn {
        defer { flushes = [] }
        if case .stopping = phase { return Turn(flushes: flushes, stop: true) }
        return Turn(flushes: flushes, stop: false)
    }

    /// The poll thread ended: from now on every event answers at once.
    mutating func ended() -> Ended {
        var stopWaiters: [Waiter] = []
        if case .stopping(let waiters) = phase { stopWaiters = waiters }
        let ended = Ended(flushes: flushes, stopWaiters: stopWaiters, roomWaiters: roomWaiters)
        phase = .stopped
        flushes = []
        roomWaiters = []
        return ended
    }
}
