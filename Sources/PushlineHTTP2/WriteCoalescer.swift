/// Decides when a handler's `NGHTTP2Output` turns nghttp2's queued frames into one write and one flush.
///
/// Submits never write directly: inside a read burst the drain waits for `channelReadComplete`;
/// otherwise the first submit of an event-loop tick schedules one drain task and later submits in
/// the same tick ride along. So N submits in one tick cost one `mem_send` loop, one write, one flush.
package struct WriteCoalescer: Hashable {
    package enum Action: Hashable {
        case none
        case scheduleDrain
    }

    private(set) var reading = false
    private(set) var drainScheduled = false

    package init() {}

    /// Something was queued in nghttp2.
    package mutating func needsDrain() -> Action {
        if reading || drainScheduled { return .none }
        drainScheduled = true
        return .scheduleDrain
    }

    package mutating func readStarted() { reading = true }

    /// The read burst ended: the caller drains now.
    package mutating func readCompleted() { reading = false }

    /// The scheduled drain task runs (the caller drains now).
    package mutating func scheduledDrainRuns() { drainScheduled = false }
}
