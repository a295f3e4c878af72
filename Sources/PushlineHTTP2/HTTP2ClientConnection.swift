import NIOCore

/// A Sendable front for one client connection, for callers off the EventLoop (tasks, other
/// threads): each call hops to the channel's EventLoop and talks to the `HTTP2ClientHandler`
/// there. Code already on the EventLoop (the APNs pool) should use the handler directly.
public struct HTTP2ClientConnection: Sendable {
    public let channel: any Channel
    private let handler: NIOLoopBound<HTTP2ClientHandler>

    /// Must be called on `channel.eventLoop`, with the handler already in `channel`'s pipeline.
    public init(channel: any Channel, handler: HTTP2ClientHandler) {
        self.channel = channel
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
    }

    /// Adds a new `HTTP2ClientHandler` to `channel` (on its EventLoop) and returns the front.
    /// Use it from a bootstrap's channel initializer so no server bytes arrive before the handler.
    public static func configure(
        channel: any Channel,
        configuration: HTTP2ClientConfiguration = .init(),
        delegate: (any HTTP2ClientDelegate & Sendable)? = nil
    ) -> EventLoopFuture<HTTP2ClientConnection> {
        channel.eventLoop.submit {
            let handler = HTTP2ClientHandler(configuration: configuration, delegate: delegate)
            try channel.pipeline.syncOperations.addHandler(handler)
            return HTTP2ClientConnection(channel: channel, handler: handler)
        }
    }

    /// The front for a channel whose pipeline already holds an `HTTP2ClientHandler`.
    public static func existing(in channel: any Channel) -> EventLoopFuture<HTTP2ClientConnection> {
        channel.eventLoop.submit {
            let handler = try channel.pipeline.syncOperations.handler(type: HTTP2ClientHandler.self)
            return HTTP2ClientConnection(channel: channel, handler: handler)
        }
    }

    /// Runs `body` with the handler on the channel's EventLoop (e.g. to read `availableStreams`
    /// or drive many submits without a hop each).
    public func withHandler<Result: Sendable>(
        _ body: @escaping @Sendable (HTTP2ClientHandler) throws -> EventLoopFuture<Result>
    ) -> EventLoopFuture<Result> {
        let eventLoop = channel.eventLoop
        return eventLoop.flatSubmit {
            do {
                return try body(handler.value)
            } catch {
                return eventLoop.makeFailedFuture(error)
            }
        }
    }

    /// Sends `request`; the future completes with the response or an `HTTP2StreamError`.
    public func send(_ request: HTTP2Request) -> EventLoopFuture<HTTP2Response> {
        let eventLoop = channel.eventLoop
        if eventLoop.inEventLoop {
            return handler.value.submit(request)
        }
        let promise = eventLoop.makePromise(of: HTTP2Response.self)
        eventLoop.execute {
            handler.value.submit(request, promise: promise)
        }
        return promise.futureResult
    }

    /// Sends a PING; the future yields the round-trip time.
    public func ping() -> EventLoopFuture<TimeAmount> {
        channel.eventLoop.flatSubmit { handler.value.ping() }
    }

    /// The peer's SETTINGS_MAX_CONCURRENT_STREAMS, read on the EventLoop.
    public func peerMaxConcurrentStreams() -> EventLoopFuture<Int> {
        channel.eventLoop.submit { handler.value.peerMaxConcurrentStreams }
    }

    /// Streams open now, read on the EventLoop.
    public func openStreams() -> EventLoopFuture<Int> {
        channel.eventLoop.submit { handler.value.openStreams }
    }

    /// Sends GOAWAY then lets open streams finish; the connection closes when they have.
    public func goAway() {
        channel.eventLoop.execute { handler.value.goAway() }
    }

    /// Closes TCP at once (no GOAWAY; open streams fail). Prefer `closeGracefully(timeout:)`.
    public func close() -> EventLoopFuture<Void> {
        channel.close()
    }

    /// The polite close (RFC 9113 §6.8): GOAWAY, no new streams, the open ones run to their end,
    /// then the handler closes TCP (see `HTTP2ClientHandler.goAway`); after `timeout` the channel
    /// is closed anyway. Completes once the channel has closed.
    public func closeGracefully(timeout: TimeAmount) -> EventLoopFuture<Void> {
        let channel = self.channel
        let handler = self.handler
        return channel.eventLoop.flatSubmit {
            guard channel.isActive else {
                channel.close(promise: nil)
                return channel.closeFuture
            }
            handler.value.goAway()
            let deadline = channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
            channel.closeFuture.whenComplete { _ in deadline.cancel() }
            return channel.closeFuture
        }
    }
}
