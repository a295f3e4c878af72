import NIOCore
import NIOPosix
import Synchronization

@testable import PushlineHTTP2
@testable import PushlineHTTP2Server

/// What a test server does with requests.
enum ServerBehavior: Sendable {
    /// Answer every request at once with 200 and the request body.
    case echo
    /// Refuse every `n`th request (by arrival order) with REFUSED_STREAM, answer the others.
    case refuseEvery(Int)
    /// Hold requests until `count` arrived, then send GOAWAY(lastStreamID) and answer all held.
    case goAwayAfter(count: Int, lastStreamID: Int32)
    /// Answer everything; after the first request raise SETTINGS_MAX_CONCURRENT_STREAMS to `to`.
    case raiseLimitAfterFirst(to: UInt32)
}

/// Server-side observations, written on server event loops and read by tests.
final class ServerProbe: Sendable {
    struct State {
        var requests = 0
        var maxOpenStreams = 0
        var limitViolations = 0
        var goAwaysSent = 0
    }

    let state = Mutex(State())

    var snapshot: State { state.withLock { $0 } }
}

/// One server connection's delegate: applies the behavior and reports to the probe.
final class ProbeServerDelegate: HTTP2ServerDelegate {
    let behavior: ServerBehavior
    let probe: ServerProbe
    private var seen = 0
    private var held: [Int32] = []

    init(behavior: ServerBehavior, probe: ServerProbe) {
        self.behavior = behavior
        self.probe = probe
    }

    func http2Server(_ connection: HTTP2ServerHandler, didReceive request: HTTP2ServerRequest) {
        seen += 1
        let open = connection.stats.maxOpenStreams
        probe.state.withLock {
            $0.requests += 1
            $0.maxOpenStreams = max($0.maxOpenStreams, open)
        }
        switch behavior {
        case .echo:
            connection.respond(to: request.streamID, status: 200, body: request.body)
        case .refuseEvery(let n):
            if seen % n == 0 {
                connection.refuseStream(request.streamID)
            } else {
                connection.respond(to: request.streamID, status: 200)
            }
        case .goAwayAfter(let count, let lastStreamID):
            held.append(request.streamID)
            if held.count == count {
                connection.sendGoAway(
                    lastStreamID: lastStreamID,
                    errorCode: .noError,
                    debugData: ByteBuffer(string: #"{"reason":"Shutdown"}"#)
                )
                for streamID in held { connection.respond(to: streamID, status: 200) }
            }
        case .raiseLimitAfterFirst(let limit):
            connection.respond(to: request.streamID, status: 200)
            if seen == 1 { connection.setMaxConcurrentStreams(limit) }
        }
    }

    func http2ServerLimitViolated(_ connection: HTTP2ServerHandler) {
        probe.state.withLock { $0.limitViolations += 1 }
    }

    func http2Server(_ connection: HTTP2ServerHandler, goAwaySent goAway: HTTP2GoAway) {
        probe.state.withLock { $0.goAwaysSent += 1 }
    }
}

/// An h2c (prior knowledge) server on 127.0.0.1 with a kernel-chosen free port.
struct TestServer: Sendable {
    let channel: any Channel
    let probe: ServerProbe
    var port: Int { channel.localAddress!.port! }

    static func start(
        maxConcurrentStreams: UInt32 = 100,
        behavior: ServerBehavior = .echo,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> TestServer {
        let probe = ServerProbe()
        let configuration = HTTP2ServerConfiguration(maxConcurrentStreams: maxConcurrentStreams)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let delegate = ProbeServerDelegate(behavior: behavior, probe: probe)
                    try channel.pipeline.syncOperations.addHandler(
                        HTTP2ServerHandler(configuration: configuration, delegate: delegate)
                    )
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return TestServer(channel: channel, probe: probe)
    }

    func stop() async throws {
        try await channel.close()
    }
}

/// Client events recorded from the client's event loop.
final class ProbeClientDelegate: HTTP2ClientDelegate, Sendable {
    struct State {
        var peerMaxValues: [Int] = []
        var goAways: [HTTP2GoAway] = []
    }

    let state = Mutex(State())

    func http2Client(_ client: HTTP2ClientHandler, peerMaxConcurrentStreamsChanged value: Int) {
        state.withLock { $0.peerMaxValues.append(value) }
    }

    func http2Client(_ client: HTTP2ClientHandler, goAwayReceived goAway: HTTP2GoAway) {
        state.withLock { $0.goAways.append(goAway) }
    }
}

/// Connects an h2c client to 127.0.0.1:port; the handler is in place before the first byte arrives.
func connectClient(
    port: Int,
    configuration: HTTP2ClientConfiguration = .init(),
    delegate: ProbeClientDelegate? = nil,
    group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
) async throws -> HTTP2ClientConnection {
    let channel = try await ClientBootstrap(group: group)
        .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(
                    HTTP2ClientHandler(configuration: configuration, delegate: delegate)
                )
            }
        }
        .connect(host: "127.0.0.1", port: port).get()
    return try await HTTP2ClientConnection.existing(in: channel).get()
}

/// Sends `total` requests keeping the connection exactly full (never above `availableStreams`),
/// as the APNs pool will; runs on the event loop. Returns (succeeded, failed).
func runClosedLoop(_ connection: HTTP2ClientConnection, total: Int, body: ByteBuffer) -> EventLoopFuture<ClosedLoopResult> {
    connection.withHandler { handler in
        let driver = ClosedLoopDriver(handler: handler, total: total, body: body)
        driver.pump()
        return driver.promise.futureResult
    }
}

struct ClosedLoopResult: Sendable {
    var succeeded = 0
    var failed = 0
}

/// Submits while the connection has free streams and refills on every completion.
final class ClosedLoopDriver {
    let handler: HTTP2ClientHandler
    let body: ByteBuffer
    let promise: EventLoopPromise<ClosedLoopResult>
    private var remaining: Int
    private var outstanding = 0
    private var result = ClosedLoopResult()

    init(handler: HTTP2ClientHandler, total: Int, body: ByteBuffer) {
        self.handler = handler
        self.body = body
        self.remaining = total
        self.promise = handler.eventLoop!.makePromise()
    }

    func pump() {
        while remaining > 0 && handler.availableStreams > 0 {
            remaining -= 1
            outstanding += 1
            let request = HTTP2Request(
                authority: "localhost",
                path: "/3/device/0123456789abcdef",
                headers: [HTTP2Header("apns-topic", "com.example"), HTTP2Header("apns-push-type", "alert", neverIndex: true)],
                body: body
            )
            handler.submit(request).assumeIsolated().whenComplete { result in
                switch result {
                case .success(let response) where response.status == 200: self.result.succeeded += 1
                default: self.result.failed += 1
                }
                self.outstanding -= 1
                if self.remaining == 0 && self.outstanding == 0 {
                    self.promise.succeed(self.result)
                } else {
                    self.pump()
                }
            }
        }
    }
}
