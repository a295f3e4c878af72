/// Requests that were unanswered when a server ended their connection with an error one request's
/// bytes can cause (PROTOCOL_ERROR, COMPRESSION_ERROR, FRAME_SIZE_ERROR in its GOAWAY): one of
/// them may be the request the server refused, and the server did not say which. They go again
/// one per connection at a time, in their order, so that a connection that ends the same way
/// again names its one suspect (`PoolStateMachine.connectionRefused`). A value owned by the pool
/// machine; no I/O.
struct SuspectQueue {
    private var waiting: [RequestID] = []
    /// The first waiting suspect's index in `waiting` (those before it left).
    private var head = 0
    /// By connection slot: the suspect on the wire there, if any.
    private var inFlight: [RequestID?]

    init(connections: Int) {
        inFlight = Array(repeating: nil, count: connections)
    }

    /// Suspects waiting to go again.
    var count: Int { waiting.count - head }

    var isEmpty: Bool { head == waiting.count }

    /// The suspect on the wire on `slot`.
    func inFlight(on slot: Int) -> RequestID? { inFlight[slot] }

    /// `request` waits behind the others.
    mutating func add(_ request: RequestID) {
        waiting.append(request)
    }

    /// The next suspect to send on `slot`, taken out of the queue and marked in flight there; nil
    /// when a suspect is on the wire there already, or none waits.
    mutating func next(for slot: Int) -> RequestID? {
        guard inFlight[slot] == nil, head < waiting.count else { return nil }
        let request = waiting[head]
        head += 1
        if head == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            head = 0
        }
        inFlight[slot] = request
        return request
    }

    /// `request`'s stream on `slot` ended: true when it was the suspect in flight there (then
    /// no longer).
    mutating func ended(_ request: RequestID, on slot: Int) -> Bool {
        guard inFlight[slot] == request else { return false }
        inFlight[slot] = nil
        return true
    }

    /// The suspect `next(for:)` gave for `slot` did not go (or went unprocessed): it is first in
    /// line again.
    mutating func putBack(_ request: RequestID, from slot: Int) {
        if inFlight[slot] == request { inFlight[slot] = nil }
        if head > 0 {
            head -= 1
            waiting[head] = request
        } else {
            waiting.insert(request, at: 0)
        }
    }

    /// Takes every waiting suspect for which `take` is true out of the queue.
    mutating func removeWaiting(where take: (RequestID) -> Bool) -> [RequestID] {
        var taken: [RequestID] = []
        var kept: [RequestID] = []
        for request in waiting[head...] {
            if take(request) { taken.append(request) } else { kept.append(request) }
        }
        waiting = kept
        head = 0
        return taken
    }
}
