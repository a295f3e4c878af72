import NIOCore

/// PINGs in flight on one connection: each gets a fresh 8-byte opaque value, and its ACK yields
/// the round-trip time. Not Sendable; confined to the connection's EventLoop.
package struct PingTracker {
    private var nextOpaque: UInt64 = 1
    private var pending: [UInt64: (sent: NIODeadline, promise: EventLoopPromise<TimeAmount>)] = [:]

    package init() {}

    /// Registers a ping and returns the opaque value to send.
    package mutating func start(at now: NIODeadline, promise: EventLoopPromise<TimeAmount>) -> UInt64 {
        let opaque = nextOpaque
        nextOpaque &+= 1
        pending[opaque] = (now, promise)
        return opaque
    }

    /// Submits a PING on `session` (the caller has it written); the future yields the round-trip
    /// time, or fails when nghttp2 refuses the frame or the connection ends first.
    package mutating func send(on session: NGHTTP2Session, eventLoop: any EventLoop) -> EventLoopFuture<TimeAmount> {
        let promise = eventLoop.makePromise(of: TimeAmount.self)
        let opaque = start(at: .now(), promise: promise)
        do {
            try session.submitPing(opaque: opaque)
        } catch {
            _ = acked(opaque, at: .now())
            promise.fail(error)
        }
        return promise.futureResult
    }

    /// The ACK for `opaque` arrived: the promise to complete and the RTT, or nil if not ours.
    package mutating func acked(_ opaque: UInt64, at now: NIODeadline) -> (EventLoopPromise<TimeAmount>, TimeAmount)? {
        guard let entry = pending.removeValue(forKey: opaque) else { return nil }
        return (entry.promise, now - entry.sent)
    }

    /// Removes and returns every pending promise (the connection ended).
    package mutating func drainAll() -> [EventLoopPromise<TimeAmount>] {
        defer { pending.removeAll() }
        return pending.values.map(\.promise)
    }
}
