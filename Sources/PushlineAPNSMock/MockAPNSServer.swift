import Logging
import NIOCore
import NIOPosix
import PushlineAPNSCore
import PushlineHTTP2
import PushlineHTTP2Server
import PushlineTLS

/// An APNs emulator: HTTP/2 over TLS on a loopback (or any) address, with APNs' validation,
/// token and certificate trust, unregistered devices, chaos and accounting.
///
/// Start it with `start(_:)`, read `stats`, and `shutdown()` when done. One event loop per core
/// by default; each connection stays on one loop.
public final class MockAPNSServer: Sendable {
    public let stats: MockStats
    /// The port actually bound (useful with port 0).
    public let port: Int
    public let host: String
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let shared: MockShared
    private let statsWriter: RepeatedTask?

    private init(
        stats: MockStats,
        port: Int,
        host: String,
        group: MultiThreadedEventLoopGroup,
        channel: any Channel,
        shared: MockShared,
        statsWriter: RepeatedTask?
    ) {
        self.stats = stats
        self.port = port
        self.host = host
        self.group = group
        self.channel = channel
        self.shared = shared
        self.statsWriter = statsWriter
    }

    /// Binds and starts serving. `identity` overrides the certificate files of the configuration
    /// (used by `--self-signed`).
    public static func start(
        _ configuration: MockConfiguration,
        identity: CertifiedKey? = nil,
        logger: Logger = Logger(label: "pushline.mock-apns")
    ) async throws -> MockAPNSServer {
        let tlsIdentity: TLSConfiguration.Identity
        if let identity {
            tlsIdentity = .certifiedKey(identity)
        } else if let certificate = configuration.tlsCertificateFile, let key = configuration.tlsKeyFile {
            tlsIdentity = .pemFiles(certificateChain: certificate, privateKey: key, password: nil)
        } else {
            throw MockError("the mock needs --tls-cert and --tls-key, or --self-signed DIR")
        }
        var tls = TLSConfiguration.server(identity: tlsIdentity)
        // APNs serves clients that offer no ALPN (HTTP/2 with prior knowledge over TLS); the mock
        // does too, and counts them (`connections_without_alpn`).
        tls.requireALPN = false
        if let clientCA = configuration.clientCAFile {
            tls.clientCertificateVerification = .require(.caFile(clientCA))
        }
        let context = try TLSContext(configuration: tls)
        let stats = MockStats()
        let shared = try MockShared(configuration: configuration, stats: stats)
        let threads = configuration.threads > 0 ? configuration.threads : System.coreCount
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        var connectionSettings = HTTP2ServerConfiguration(maxConcurrentStreams: MockPolicy.initialLimit(configuration))
        connectionSettings.resetRateLimit = configuration.resetRateLimit
        let http2 = connectionSettings

        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let tlsHandler = try TLSHandler(context: context)
                    let delegate = MockConnection(shared: shared, channel: channel)
                    let handler = HTTP2ServerHandler(configuration: http2, delegate: delegate)
                    try channel.pipeline.syncOperations.addHandlers([tlsHandler, handler, MockErrorSink(stats: stats)])
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
        } catch {
            try? await group.shutdownGracefully()
            throw MockError("cannot listen on \(configuration.host):\(configuration.port): \(error)")
        }
        let port = channel.localAddress?.port ?? configuration.port

        var statsWriter: RepeatedTask?
        if let path = configuration.statsFile {
            let interval = TimeAmount.seconds(Int64(max(1, configuration.statsIntervalSeconds)))
            let loop = group.next()
            statsWriter = loop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
                Self.writeStats(stats, to: path, logger: logger)
            }
        }
        logger.info("mock APNs listening", metadata: ["address": "\(configuration.host):\(port)", "threads": "\(threads)"])
        return MockAPNSServer(
            stats: stats,
            port: port,
            host: configuration.host,
            group: group,
            channel: channel,
            shared: shared,
            statsWriter: statsWriter
        )
    }

    /// Writes the stats JSON to `--stats-file` now (SIGUSR1, exit).
    public func writeStats(logger: Logger = Logger(label: "pushline.mock-apns")) {
        guard let path = shared.configuration.statsFile else { return }
        Self.writeStats(stats, to: path, logger: logger)
    }

    static func writeStats(_ stats: MockStats, to path: String, logger: Logger) {
        do {
            try FileSystem.write(stats.snapshot().json() + "\n", to: path, mode: 0o644)
        } catch {
            logger.error("cannot write stats", metadata: ["error": "\(error)"])
        }
    }

    /// Stops accepting, closes every connection, writes the final stats, and frees the threads.
    public func shutdown() async throws {
        statsWriter?.cancel(promise: nil)
        try? await channel.close()
        shared.recorder?.flush()
        writeStats()
        try await group.shutdownGracefully()
    }
}

/// The mock's errors: a message for the user.
public struct MockError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// Swallows per-connection errors (a client's bad handshake must not reach the server's log as
/// an unhandled error); the connection is closed by the handler that raised it.
final class MockErrorSink: ChannelInboundHandler, Sendable {
    typealias InboundIn = Never
    private let stats: MockStats

    init(stats: MockStats) {
        self.stats = stats
    }

    /// A handshake that negotiated no ALPN protocol: served, and counted.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted(let negotiated)? = event as? TLSUserEvent, negotiated == nil {
            stats.connectionWithoutALPN()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
