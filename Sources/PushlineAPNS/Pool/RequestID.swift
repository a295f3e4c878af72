/// A request inside the pool machine: its slot in the machine's `RequestTable`. The machine hands
/// it to a connection with each send, and the connection names the request by it when its
/// stream ends; a slot is reused only after its request finished, and a connection reports each
/// send it was given exactly once (ended or not started).
struct RequestID: Hashable, Sendable {
    var slot: UInt32

    init(_ slot: Int) {
        self.slot = UInt32(truncatingIfNeeded: slot)
    }

    var index: Int { Int(slot) }
}
