/// The pool machine's requests, in one growing array of slots reused through a free list: one
/// allocation for all of them (amortised), none per request. Reads and writes go to the slot in
/// place (`_read` / `_modify`), so looking at a field copies nothing else of the request.
struct RequestTable {
    private var slots: [RequestState] = []
    private var free: [UInt32] = []

    /// Requests the table holds.
    private(set) var count = 0

    /// What a free slot holds: no batch of anyone's, so a finished request's batch is let go at once.
    private static let vacant = RequestState(
        batch: RequestBatch(notifications: [], options: .init(), created: .init(nanoseconds: 0), completion: .closure { _, _ in }),
        index: 0
    )

    mutating func insert(_ state: RequestState) -> RequestID {
        count += 1
        if let slot = free.popLast() {
            slots[Int(slot)] = state
            return RequestID(Int(slot))
        }
        slots.append(state)
        return RequestID(slots.count - 1)
    }

    /// Removes a request (it finished) and frees its slot.
    @discardableResult
    mutating func remove(_ id: RequestID) -> RequestState {
        precondition(contains(id), "request \(id.slot) is not in the table")
        var state = Self.vacant
        swap(&state, &slots[id.index])
        free.append(id.slot)
        count -= 1
        return state
    }

    func contains(_ id: RequestID) -> Bool {
        id.index < slots.count && slots[id.index].batch !== Self.vacant.batch
    }

    subscript(id: RequestID) -> RequestState {
        _read { yield slots[id.index] }
        _modify { yield &slots[id.index] }
    }
}
