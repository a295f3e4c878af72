/// What the pool decided about the connection that reported an event, handed back to it as the
/// report's result (as swift-nio-http2's state machines return effects to their caller): the
/// connection carries them out after the pool's lock is released, and the pool never calls into
/// the connection that is reporting.
struct ConnectionActions {
    /// Lifecycle steps, in the order the pool decided them.
    var lifecycle: [ConnectionLifecycle.Action] = []
    /// Requests to start here (a stream slot is reserved for each), after the lifecycle steps.
    var sends: [OutgoingRequest] = []

    var isEmpty: Bool { lifecycle.isEmpty && sends.isEmpty }
}

extension PoolActions {
    /// Takes the actions aimed at connection `slot` out of these; the rest stay.
    mutating func take(slot: Int) -> ConnectionActions {
        var mine = ConnectionActions()
        if connections.contains(where: { $0.slot == slot }) {
            mine.lifecycle = connections.filter { $0.slot == slot }.map(\.action)
            connections.removeAll { $0.slot == slot }
        }
        if sends.contains(where: { $0.slot == slot }) {
            for send in sends where send.slot == slot {
                // The usual case, one hand-over for this connection, takes its array as it is.
                if mine.sends.isEmpty { mine.sends = send.requests } else { mine.sends.append(contentsOf: send.requests) }
            }
            sends.removeAll { $0.slot == slot }
        }
        return mine
    }
}
