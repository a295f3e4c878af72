import NIOCore

/// The pool's queue of requests waiting for a stream, in two lanes: an urgent request always
/// leaves before any bulk one; within a lane the order is first in, first out (with `prepend` for
/// a request that goes again at once).
struct LaneQueue: Sequence {
    private var urgent = CircularBuffer<PendingRequest>(initialCapacity: 16)
    private var bulk = CircularBuffer<PendingRequest>(initialCapacity: 1024)

    var count: Int { urgent.count + bulk.count }

    var isEmpty: Bool { urgent.isEmpty && bulk.isEmpty }

    /// The request that leaves next.
    var first: PendingRequest? { urgent.first ?? bulk.first }

    func count(of lane: SendLane) -> Int {
        lane == .urgent ? urgent.count : bulk.count
    }

    mutating func append(_ request: PendingRequest) {
        if request.options.lane == .urgent {
            urgent.append(request)
        } else {
            bulk.append(request)
        }
    }

    /// To the front of its lane (an urgent request still goes before it when it is bulk).
    mutating func prepend(_ request: PendingRequest) {
        if request.options.lane == .urgent {
            urgent.prepend(request)
        } else {
            bulk.prepend(request)
        }
    }

    /// Removes the request that leaves next; the queue must not be empty.
    mutating func removeFirst() -> PendingRequest {
        urgent.isEmpty ? bulk.removeFirst() : urgent.removeFirst()
    }

    mutating func removeAll() {
        urgent.removeAll()
        bulk.removeAll()
    }

    /// Keeps, in order, the requests for which `keep` is true.
    mutating func retain(where keep: (PendingRequest) -> Bool) {
        func filtered(_ lane: CircularBuffer<PendingRequest>) -> CircularBuffer<PendingRequest> {
            var kept = CircularBuffer<PendingRequest>(initialCapacity: lane.count)
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
        var urgent: CircularBuffer<PendingRequest>.Iterator
        var bulk: CircularBuffer<PendingRequest>.Iterator

        mutating func next() -> PendingRequest? {
            urgent.next() ?? bulk.next()
        }
    }
}
