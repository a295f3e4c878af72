import PushlineAPNSCore

/// Result records waiting to be produced again, and when each may go: after librdkafka's next
/// delivery report (its queue was full, and every report frees room), or once a backoff is over
/// (the delivery failed).
///
/// A value: `ResultPublisher` keeps it under a lock and re-sends what `takeReady` returns.
/// `deliveries` is the publisher's count of delivery reports; an item that waits for room records
/// the count it saw before its failed attempt, so a report that came in between is not missed.
struct RetryQueue<Item> {
    enum Wait {
        /// librdkafka's queue was full when `deliveries` was this.
        case room(deliveriesSeen: UInt64)
        case backoff(until: MonotonicInstant)
    }

    private var waitingForRoom: [(item: Item, deliveriesSeen: UInt64)] = []
    private var backingOff: [(item: Item, until: MonotonicInstant)] = []

    init() {}

    var count: Int { waitingForRoom.count + backingOff.count }

    /// Whether an item waits for a delivery report (so reports must wake the publisher).
    var isWaitingForRoom: Bool { !waitingForRoom.isEmpty }

    /// When the earliest backoff ends, if any item backs off.
    var nextBackoffEnd: MonotonicInstant? { backingOff.map(\.until).min() }

    mutating func add(_ item: Item, waiting wait: Wait) {
        switch wait {
        case .room(let seen): waitingForRoom.append((item, seen))
        case .backoff(let until): backingOff.append((item, until))
        }
    }

    /// Takes, oldest first, the items waiting for room if a report came since they failed, and the
    /// items whose backoff is over.
    mutating func takeReady(now: MonotonicInstant, deliveries: UInt64) -> [Item] {
        var ready: [Item] = []
        let stillFull = waitingForRoom.filter { $0.deliveriesSeen == deliveries }
        ready += waitingForRoom.filter { $0.deliveriesSeen != deliveries }.map(\.item)
        waitingForRoom = stillFull
        ready += backingOff.filter { $0.until <= now }.map(\.item)
        backingOff.removeAll { $0.until <= now }
        return ready
    }

    /// Empties the queue (shutdown), returning how many items it held.
    mutating func removeAll() -> Int {
        defer {
            waitingForRoom = []
            backingOff = []
        }
        return count
    }
}
