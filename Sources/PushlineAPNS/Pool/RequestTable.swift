/// The pool machine's requests, in one growing array of slots reused through a free list: one
/// allocation for all of them (amortised), none per request. Reads and writes go to the slot in
/// place (`_read` / `_modify`), so looking at a field copies nothing else of the request.
///
/// A request moves in and out of its slot: `insert` consumes it and `remove` swaps it out, so
/// neither retains its batch again. A free slot holds nothing (nil); it held a shared vacant
/// request before, whose batch every `remove` retained and every `insert` released, one object
/// touched by every event loop.
struct RequestTable {
    private var slots: [RequestState?] = []
    private var free: [UInt32] = []

    /// Requests the table holds.
    private(set) var count = 0

    mutating func insert(_ state: consuming RequestState) -> RequestID {
        count += 1
        if let slot = free.popLast() {
            slots[Int(slot)] = consume state
            return RequestID(Int(slot))
        }
        slots.append(consume state)
        return RequestID(slots.count - 1)
    }

    /// Removes a request (it finished) and frees its slot.
    @discardableResult
    mutating func remove(_ id: RequestID) -> RequestState {
        precondition(contains(id), "request \(id.slot) is not in the table")
        var state: RequestState? = nil
        swap(&state, &slots[id.index])
        free.append(id.slot)
        count -= 1
        return state!
    }

    func contains(_ id: RequestID) -> Bool {
        id.index < slots.count && slots[id.index] != nil
    }

    subscript(id: RequestID) -> RequestState {
        _read { yield slots[id.index]! }
        _modify { yield &slots[id.index]! }
    }
}
