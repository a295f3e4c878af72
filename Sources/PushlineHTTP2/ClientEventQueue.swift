import NIOCore

/// What an `HTTP2ClientHandler` learns inside nghttp2's callbacks and tells its submitters and
/// its delegate only once nghttp2 has returned (a delegate may submit again, and nghttp2 must not
/// be re-entered): queued in order, each delivered once by `run`.
///
/// A class because delivery is re-entrant: a delegate called from `run` may make the handler
/// queue more (a cancel, a connection that closes), which `run` delivers in its next round.
final class ClientEventQueue {
    enum Event {
        case completed(ClientStream.Completion, Result<HTTP2Response, HTTP2StreamError>)
        case pong(EventLoopPromise<TimeAmount>, TimeAmount)
        case peerMaxChanged(Int)
        case goAwayReceived(HTTP2GoAway)
        case goAwaySent(HTTP2GoAway)
    }

    // `@exclusivity(unchecked)`: confined to one event loop and never accessed re-entrantly (the
    // nghttp2 callbacks run inside our calls into the session, but touch no property those calls
    // hold open); without the HTTP/2 client's, the worker's CPU per notification was ×1.085 at 100
    // tokens per job, and ×1.100 without them all (docs/architecture.md, "Unsafe constructs on the hot path").
    @exclusivity(unchecked) private var events = MoveQueue<Event>()
    /// `run`'s emptied queue, kept for its storage (nil while a run has it).
    @exclusivity(unchecked) private var spare: MoveQueue<Event>? = MoveQueue<Event>()
    /// Streams ended (their slots are free) since the last run.
    @exclusivity(unchecked) private var streamsFinished = false

    func append(_ event: consuming Event) {
        events.append(event)
    }

    /// Streams ended: the delegate hears `http2ClientStreamsFinished` after this run's events.
    func streamsEnded() {
        streamsFinished = true
    }

    /// Delivers every queued event to `client`'s submitters and delegate, in order.
    func run(for client: HTTP2ClientHandler) {
        // Items are moved out, not copied: a completion holds the response and the caller's tag.
        // What the calls add meanwhile goes to `events` and runs in the next round. A run
        // started inside a call (the connection ended) takes a queue of its own.
        var items = spare ?? MoveQueue<Event>()
        spare = nil
        while !events.isEmpty {
            swap(&items, &events)
            items.drain { item in
                switch item {
                case .completed(let completion, let result): client.complete(completion, result)
                case .pong(let promise, let rtt): promise.succeed(rtt)
                case .peerMaxChanged(let value): client.delegate?.http2Client(client, peerMaxConcurrentStreamsChanged: value)
                case .goAwayReceived(let goAway): client.delegate?.http2Client(client, goAwayReceived: goAway)
                case .goAwaySent(let goAway): client.delegate?.http2Client(client, goAwaySent: goAway)
                }
            }
        }
        spare = items
        if streamsFinished {
            streamsFinished = false
            client.delegate?.http2ClientStreamsFinished(client)
        }
    }
}
