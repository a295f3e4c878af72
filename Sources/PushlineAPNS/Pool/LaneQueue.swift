import NIOCore

/// The pool's queue of requests waiting for a stream, in two lanes: an urgent request always
/// leaves before any bulk one; within a lane the order is first in, first out (with `prepend` for
/// a request that goes again at once).
///
/// The queue also counts its requests that carry a deadline (`withDeadline`), updated by every
/// change it makes, so the pool's deadline sweep can skip a queue with none without walking it.
struct LaneQueue: Sequence {
    /// A queued request, and whether it carries a deadline (fixed for its life: its options).
    fileprivate struct Entry {
        var id: RequestID
        var hasDeadline: Bool
    }

    private var urgent = CircularBuffer<Entry>(initialCapacity: 16)
    private var bulk = CircularBuffer<Entry>(initialCapacity: 1024)

    /// Queued requests that carry a deadline.
    private(set) var withDeadline = 0

    var count: Int { urgent.count + bulk.count }

    var isEmpty: Bool { urgent.isEmpty && bulk.isEmpty }

    /// The request that leaves next.
    var first: RequestID? { (urgent.first ?? bulk.first)?.id }

    func count(of lane: SendLane) -> Int {
        lane == .urgent ? urgent.count : bulk.count
    }

    mutating func append(_ request: RequestID, lane: SendLane, hasDeadline: Bool) {
        if hasDeadline { withDeadline += 1 }
        let entry = Entry(id: request, hasDeadline: hasDeadline)
        if lane == .urgent {
            urgent.append(entry)
        } else {
            bulk.append(entry)
        }
    }

    /// To the front of its lane (an urgent request still goes before it when it is bulk).
    mutating func prepend(_ request: RequestID, lane: SendLane, hasDeadline: Bool) {
        if hasDeadline { withDeadline += 1 }
        let entry = Entry(id: request, hasDeadline: hasDeadline)
        if lane == .urgent {
            urgent.prepend(entry)
        } else {
            bulk.prepend(entry)
        }
    }

    /// Removes the request that leaves next; the queue must not be empty.
    mutating func removeFirst() -> RequestID {
        let entry = urgent.isEmpty ? bulk.removeFirst() : urgent.removeFirst()
        if entry.hasDeadline { withDeadline -= 1 }
        return entry.id
    }

    mutating func removeAll() {
        urgent.removeAll()
        bulk.removeAll()
        withDeadline = 0
    }

    /// Keeps, in order, the requests for which `keep` is true.
    mutating func retain(where keep: (RequestID) -> Bool) {
        var withDeadline = 0
        func filtered(_ lane: CircularBuffer<Entry>) -> CircularBuffer<Entry> {
            var kept = CircularBuffer<Entry>(initialCapacity: lane.count)
            for entry in lane where keep(entry.id) {
                kept.append(entry)
                if entry.hasDeadline { withDeadline += 1 }
            }
            return kept
        }
        if !urgent.isEmpty { urgent = filtered(urgent) }
        if !bulk.isEmpty { bulk = filtered(bulk) }
        self.withDeadline = withDeadline
    }

    /// Urgent requests first, then bulk ones, each lane in order.
    func makeIterator() -> Iterator {
        Iterator(urgent: urgent.makeIterator(), bulk: bulk.makeIterator())
    }

    struct Iterator: IteratorProtocol {
        fileprivate var urgent: CircularBuffer<Entry>.Iterator
        fileprivate var bulk: CircularBuffer<Entry>.Iterator

        mutating func next() -> RequestID? {
            (urgent.next() ?? bulk.next())?.id
        }
    }
}
