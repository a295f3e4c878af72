/// The pool machine's requests, in one growing array of slots reused through a free list: one
/// allocation for all of them (amortised), none per request.
struct RequestTable {
    private var slots: [RequestState?] = []
    private var free: [UInt32] = []

    /// Requests the table holds.
    private(set) var count = 0

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
        guard let state = slots[id.index] else { preconditionFailure("request \(id.slot) is not in the table") }
        slots[id.index] = nil
        free.append(id.slot)
        count -= 1
        return state
    }

    func contains(_ id: RequestID) -> Bool {
        id.index < slots.count && slots[id.index] != nil
    }

    subscript(id: RequestID) -> RequestState {
        get {
            guard let state = slots[id.index] else { preconditionFailure("request \(id.slot) is not in the table") }
            return state
        }
        _modify {
            guard slots[id.index] != nil else { preconditionFailure("request \(id.slot) is not in the table") }
            yield &slots[id.index]!
        }
    }
}
