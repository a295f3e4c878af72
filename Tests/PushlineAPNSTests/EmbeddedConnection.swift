import Logging
import NIOCore
import NIOEmbedded
import PushlineAPNSCore
import PushlineHTTP2
import PushlineHTTP2Server
import PushlineTLS

@testable import PushlineAPNS

/// A `PooledConnection` on an `EmbeddedEventLoop`, with no socket, no TLS and no mock: its
/// channel is an `EmbeddedChannel` (`PlainChannelSetup`) whose bytes go to an
/// `HTTP2ServerHandler` on a second `EmbeddedChannel`, and its pool is a script (`ScriptedPool`)
/// that records every report and answers with the actions a test gives it.
final class EmbeddedConnection {
    let loop = EmbeddedEventLoop()
    let pool = ScriptedPool()
    let server = RecordingAPNSServer()
    let setup: PlainChannelSetup
    let connection: PooledConnection
    /// The server side of the current channel (a new one per connect).
    private(set) var serverChannel: EmbeddedChannel?

    init(requestTimeout: Duration = .seconds(60), pingInterval: Duration = .seconds(60)) {
        setup = PlainChannelSetup(loop: loop)
        let pool = pool
        connection = PooledConnection(
            slot: 0,
            eventLoop: loop,
            settings: PooledConnection.Settings(
                channelSetup: setup,
                requestTimeout: requestTimeout,
                pingInterval: pingInterval,
                pingTimeout: .seconds(1),
                closeTimeout: .seconds(5),
                authority: "api.push.apple.com",
                tokens: nil,
                metrics: APNSMetrics(app: "embedded"),
                logger: Logger(label: "embedded-connection")
            )
        ) { _, event in pool.report(event) }
    }

    /// Connects (as the pool's `.connect` would), says TLS is up (a plain channel has none), and
    /// exchanges the prefaces and SETTINGS.
    func connect() throws {
        connection.perform(.connect)
        let server = EmbeddedChannel(handler: HTTP2ServerHandler(delegate: self.server), loop: loop)
        try server.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        serverChannel = server
        // As over TLS: the handshake completes before the server's SETTINGS arrive.
        setup.channels.last!.pipeline.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: "h2"))
        try interact()
    }

    /// Runs the loop and moves bytes both ways until nothing moves.
    func interact() throws {
        guard let client = setup.channels.last, let serverChannel else { return loop.run() }
        var moved = true
        while moved {
            moved = false
            loop.run()
            // Bytes written before a side closed still reach the other (a server that closes
            // after its last answer), unless that one closed too.
            while let bytes = try client.readOutbound(as: ByteBuffer.self), serverChannel.isActive {
                try serverChannel.writeInbound(bytes)
                moved = true
            }
            while let bytes = try serverChannel.readOutbound(as: ByteBuffer.self), client.isActive {
                try client.writeInbound(bytes)
                moved = true
            }
        }
    }

    /// Request `id`: notification `index` of a batch of device notifications given one by one.
    static func requests(_ ids: [Int]) -> [OutgoingRequest] {
        let notifications = ids.map {
            APNSNotification(deviceToken: "aa\($0)", topic: "com.example.app", apnsID: "id-\($0)", payload: Array("{\"n\":\($0)}".utf8))
        }
        let batch = RequestBatch(notifications: notifications, options: APNSSendOptions(), created: .now, completion: .closure { _, _ in })
        return ids.indices.map { OutgoingRequest(id: RequestID(ids[$0]), batch: batch, index: $0) }
    }
}

/// Opens plain `EmbeddedChannel`s on the test's loop, with the pipeline a connection expects
/// (its HTTP/2 handler, then `ConnectionEvents`); or fails, when told to.
///
/// `@unchecked Sendable`: used only on the test's thread (the `EmbeddedEventLoop` runs there).
final class PlainChannelSetup: ConnectionChannelSetup, @unchecked Sendable {
    let loop: EmbeddedEventLoop
    private(set) var channels: [EmbeddedChannel] = []
    /// Connect attempts, failed ones included.
    private(set) var attempts = 0
    var failNext = false

    init(loop: EmbeddedEventLoop) {
        self.loop = loop
    }

    var target: String { "embedded" }

    func connect(_ connection: PooledConnection) -> EventLoopFuture<any Channel> {
        attempts += 1
        if failNext {
            failNext = false
            return loop.makeFailedFuture(ChannelError.connectTimeout(.seconds(1)))
        }
        let channel = EmbeddedChannel(loop: loop)
        channels.append(channel)
        return loop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandlers([connection.makeHTTP2Handler(), ConnectionEvents(connection: connection)])
            try channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            return channel
        }
    }
}

/// The pool, as a script: records what the connection reports and answers with `decide`'s actions.
/// Checks that no report arrives while another is being answered (no call cycle).
///
/// `@unchecked Sendable`: used only on the test's thread (the `EmbeddedEventLoop` runs there).
final class ScriptedPool: @unchecked Sendable {
    private(set) var events: [ConnectionEvent] = []
    private(set) var nestedReports = 0
    private var reporting = false
    var decide: (ConnectionEvent) -> ConnectionActions = { _ in ConnectionActions() }

    func report(_ event: ConnectionEvent) -> ConnectionActions {
        if reporting { nestedReports += 1 }
        reporting = true
        defer { reporting = false }
        events.append(event)
        return decide(event)
    }

    /// The events as short strings, the streams' ends one by one.
    var log: [String] {
        events.map { event in
            switch event {
            case .connectFailed: "connectFailed"
            case .connected(let limit): "connected(\(limit.map(String.init) ?? "nil"))"
            case .peerLimitChanged(let limit): "peerLimitChanged(\(limit))"
            case .goAway: "goAway"
            case .pingLost: "pingLost"
            case .closed: "closed"
            case .backoffElapsed: "backoffElapsed"
            case .streamsEnded(let ended): "ended(" + ended.map { "\($0.id.slot):\(Self.describe($0.end))" }.joined(separator: ",") + ")"
            case .notStarted(let ids, let unusable): "notStarted(\(ids.map(\.slot)), unusable: \(unusable))"
            }
        }
    }

    static func describe(_ end: StreamEnd) -> String {
        switch end {
        case .response(let response): "\(response.status)"
        case .unprocessed: "unprocessed"
        case .timedOut: "timedOut"
        case .lost: "lost"
        case .malformed: "malformed"
        case .connectionError: "connectionError"
        }
    }
}

/// The server side: records requests and answers each with 200 (echoing its `apns-id`), unless
/// `hold`; remembers GOAWAYs and resets.
final class RecordingAPNSServer: HTTP2ServerDelegate {
    private(set) var requests: [HTTP2ServerRequest] = []
    private(set) var goAways: [HTTP2GoAway] = []
    private(set) var resets: [Int32] = []
    var hold = false

    func http2Server(_ connection: HTTP2ServerHandler, didReceive request: HTTP2ServerRequest) {
        requests.append(request)
        guard !hold else { return }
        let id = request.headers.first { $0.name == "apns-id" }?.value ?? ""
        _ = connection.respond(to: request.streamID, status: 200, headers: [HTTP2Header("apns-id", id)])
    }

    func http2Server(_ connection: HTTP2ServerHandler, goAwayReceived goAway: HTTP2GoAway) {
        goAways.append(goAway)
    }

    func http2Server(_ connection: HTTP2ServerHandler, resetReceived streamID: Int32, errorCode: HTTP2ErrorCode) {
        resets.append(streamID)
    }
}
