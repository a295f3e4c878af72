import NIOCore

/// The pool's queue of requests waiting for a stream, in two lanes: an urgent request always
/// leaves before any bulk one; within a lane the order is first in, first out (with `prepend` for
/// a request that goes again at once).
struct LaneQueue: Sequence {
    private var urgent = CircularBuffer<RequestID>(initialCapacity: 16)
    private var bulk = CircularBuffer<RequestID>(initialCapacity: 1024)

    var count: Int { urgent.count + bulk.count }

    var isEmpty: Bool { urgent.isEmpty && bulk.isEmpty }

    /// The request that leaves next.
    var first: RequestID? { urgent.first ?? bulk.first }

    func count(of lane: SendLane) -> Int {
        lane == .urgent ? urgent.count : bulk.count
    }

    mutating func append(_ request: RequestID, lane: SendLane) {
        if lane == .urgent {
            urgent.append(request)
        } else {
            bulk.append(request)
        }
    }

    /// To the front of its lane (an urgent request still goes before it when it is bulk).
    mutating func prepend(_ request: RequestID, lane: SendLane) {
        if lane == .urgent {
            urgent.prepend(request)
        } else {
            bulk.prepend(request)
        }
    }

    /// Removes the request that leaves next; the queue must not be empty.
    mutating func removeFirst() -> RequestID {
        urgent.isEmpty ? bulk.removeFirst() : urgent.removeFirst()
    }

    mutating func removeAll() {
        urgent.removeAll()
        bulk.removeAll()
    }

    /// Keeps, in order, the requests for which `keep` is true.
    mutating func retain(where keep: (RequestID) -> Bool) {
        func filtered(_ lane: CircularBuffer<RequestID>) -> CircularBuffer<RequestID> {
            var kept = CircularBuffer<RequestID>(initialCapacity: lane.count)
            for request in lane where keep(request) { kept.append(request) }
            return kept
        }
        if !urgent.isEmpty { urgent = filtered(urgent) }
        if !bulk.isEmpty { bulk = filtered(bulk) }
    }

    /// Urgent requests first, then bulk ones, each lane in order.
    func makeIterator() -> Iterator {
        Iterator(urgent: urgent.makeIterator(), bulk: bulk.makeIterator())
    }

    struct Iterator: IteratorProtocol {
        var urgent: CircularBuffer<RequestID>.Iterator
        var bulk: CircularBuffer<RequestID>.Iterator

        mutating func next() -> RequestID? {
            urgent.next() ?? bulk.next()
        }
    }
}
