/// Where a `KafkaTopicFollower` is: finding its topic (or knowing it absent, and that it may not
/// create it), reading it up to where each partition ended when reading began, caught up, and
/// finished; whether a stop was asked for rides along
/// until the thread ends. `TopicFollowerCore` keeps it under its condition and performs nothing of
/// it but the waits; tests drive it alone (`TopicFollowerStateTests`).
enum TopicFollowerState: Sendable, Hashable {
    /// Looking for the topic (or creating it).
    case finding(stopping: Bool)
    /// The topic does not exist and the follower may not create it: there is nothing to read,
    /// so nobody waits (the follower still looks for it, and reads it from the beginning once it
    /// appears).
    case absent(stopping: Bool)
    /// Reading: `ended` are the partitions that reached their end, of `partitions`.
    case reading(ended: Set<Int32>, partitions: Int32, stopping: Bool)
    /// Every record that was in the topic when reading began has been handed out.
    case caughtUp(stopping: Bool)
    /// The follower's thread ended (stopped, or the topic could not be read).
    case finished(caughtUp: Bool)

    var isCaughtUp: Bool {
        switch self {
        case .caughtUp, .absent, .finished(caughtUp: true): true
        case .finding, .reading, .finished(caughtUp: false): false
        }
    }

    /// A stop was asked for (the thread's loops end), or the thread ended.
    var isStopping: Bool {
        switch self {
        case .finding(let stopping), .absent(let stopping), .reading(_, _, let stopping), .caughtUp(let stopping): stopping
        case .finished: true
        }
    }

    var isFinished: Bool {
        if case .finished = self { return true }
        return false
    }

    /// Whether `waitUntilCaughtUp` stops waiting: caught up, or never going to be (a stop was
    /// asked for: the waiter need not wait for the thread's current call to return).
    var waitIsOver: Bool { isCaughtUp || isStopping }

    mutating func requestStop() {
        switch self {
        case .finding: self = .finding(stopping: true)
        case .absent: self = .absent(stopping: true)
        case .reading(let ended, let partitions, _): self = .reading(ended: ended, partitions: partitions, stopping: true)
        case .caughtUp: self = .caughtUp(stopping: true)
        case .finished: break
        }
    }

    /// The topic is missing and cannot be created (refused, not unanswered): nobody waits for it.
    mutating func absent() {
        guard case .finding(let stopping) = self else { return }
        self = .absent(stopping: stopping)
    }

    /// The topic was found with `partitions` partitions (at once, or after it was absent), and
    /// reading begins.
    mutating func found(partitions: Int32) {
        switch self {
        case .finding(let stopping), .absent(let stopping): self = .reading(ended: [], partitions: partitions, stopping: stopping)
        case .reading, .caughtUp, .finished: return
        }
    }

    /// `partition` reached its end; true when that made the follower caught up (its waiters are
    /// woken). An end seen again, or after catching up, changes nothing.
    mutating func ended(_ partition: Int32) -> Bool {
        guard case .reading(var ended, let partitions, let stopping) = self, ended.count < partitions,
            ended.insert(partition).inserted
        else { return false }
        guard ended.count == partitions else {
            self = .reading(ended: ended, partitions: partitions, stopping: stopping)
            return false
        }
        self = .caughtUp(stopping: stopping)
        return true
    }

    /// The thread ended.
    mutating func finish() {
        self = .finished(caughtUp: isCaughtUp)
    }
}
