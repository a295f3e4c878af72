import CNGHTTP2
import NIOCore

/// Writes one `NGHTTP2Session`'s frames into its handler's channel: the part the client and the
/// server handler share.
///
/// Submits never write. The first `needsDrain` of an event-loop tick schedules one drain, and a
/// read burst drains at its end (`WriteCoalescer`); a drain turns everything nghttp2 has queued
/// into one buffer, one write and one flush, then lets the owner deliver what the session's
/// callbacks queued meanwhile (`NGHTTP2OutputOwner`), and closes the channel once nghttp2 wants
/// neither to read nor to write.
///
/// Invariants: nothing is written before `start` or after `connectionEnded`; a drain scheduled
/// before the channel closed finds it ended and does nothing (no bytes into a closed channel, no
/// event after the owner said the connection closed). A failure is fired down the pipeline and
/// closes the channel. Confined to the channel's EventLoop; not Sendable.
package final class NGHTTP2Output {
    package enum State: Hashable {
        /// Not started: the handler is not in a pipeline of an active channel yet.
        case idle
        /// SETTINGS submitted; frames are written as they are queued.
        case started
        /// The connection ended (channel inactive, or the handler removed): nothing more is written.
        case ended
    }

    private let session: NGHTTP2Session
    /// The handler that owns this object and the session, set right after both are made.
    /// `unowned`: the owner holds this object, and a drain reaches the owner only while `context`
    /// (which holds the owner) is set.
    package unowned var owner: (any NGHTTP2OutputOwner)?
    // `@exclusivity(unchecked)`: confined to one event loop and never accessed re-entrantly (the
    // nghttp2 callbacks run inside our calls into the session, but touch no property those calls
    // hold open); without the HTTP/2 client's, the worker's CPU per notification was ×1.085 at 100
    // tokens per job, and ×1.100 without them all (docs/architecture.md, "Unsafe constructs on the hot path").
    /// The owner's context while it is in a pipeline.
    @exclusivity(unchecked) package private(set) var context: ChannelHandlerContext?
    @exclusivity(unchecked) package private(set) var state = State.idle
    @exclusivity(unchecked) private var coalescer = WriteCoalescer()

    package init(session: NGHTTP2Session) {
        self.session = session
    }

    /// True once the connection ended: submits and frames are refused from then on.
    package var ended: Bool { state == .ended }

    // MARK: The owner's pipeline

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    package func handlerRemoved() {
        context = nil
    }

    /// Queues the owner's first SETTINGS and connection window and writes them, once, when the
    /// owner is in the pipeline of an active channel; a failure closes the channel.
    package func start(settings: @autoclosure () -> [(id: nghttp2_settings_id, value: UInt32)], connectionWindow: Int32) {
        guard state == .idle, let context else { return }
        state = .started
        do {
            try session.submitSettings(settings())
            try session.setConnectionWindow(connectionWindow)
        } catch {
            fail(error)
            return
        }
        drain()
    }

    /// The connection ended; returns false when it had already. From now on nothing is written.
    package func connectionEnded() -> Bool {
        guard state != .ended else { return false }
        state = .ended
        return true
    }

    // MARK: Writing

    /// Something was queued in nghttp2: schedules a drain unless one is due anyway.
    package func needsDrain() {
        guard state == .started, case .scheduleDrain = coalescer.needsDrain(), let context else { return }
        context.eventLoop.assumeIsolated().execute {
            self.coalescer.scheduledDrainRuns()
            self.drain()
        }
    }

    /// A read burst began: submits made during it leave at its end.
    package func readStarted() {
        coalescer.readStarted()
    }

    /// The read burst ended: drains now.
    package func readCompleted() {
        coalescer.readCompleted()
        drain()
    }

    /// One `mem_send` loop into one buffer, one write and one flush; then the owner delivers what
    /// the session queued, and the channel closes if nghttp2 is done with it.
    package func drain() {
        guard state == .started, let context else { return }
        let open: Bool
        do {
            open = try session.flushOutput(to: context)
        } catch {
            fail(error)
            return
        }
        owner?.outputFlushed()
        if !open { context.close(promise: nil) }
    }

    /// Fires `error` down the pipeline and closes the channel.
    package func fail(_ error: any Error) {
        guard let context else { return }
        context.fireErrorCaught(error)
        context.close(promise: nil)
    }
}

@available(*, unavailable)
extension NGHTTP2Output: Sendable {}

/// The handler an `NGHTTP2Output` writes for.
package protocol NGHTTP2OutputOwner: AnyObject {
    /// A drain wrote what nghttp2 had queued: deliver what the session's callbacks queued during
    /// it (outside nghttp2, so delegates may submit again).
    func outputFlushed()
}
