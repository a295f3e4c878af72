import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Prometheus
import PushlineAPNSCore
import ServiceLifecycle
import Synchronization

/// Serves `/metrics` (Prometheus text format), `/healthz` and `/readyz` on `metrics.listen`.
///
/// `/healthz` answers from an event loop of the server, so a 200 means the process and its loops
/// run; `/readyz` answers 200 only once the consumer joined its group and every app has an active
/// APNs connection (503 with the reason otherwise).
public final class MetricsServer: Service, Sendable {
    private let address: HostPort
    private let metrics: PushlineMetricsFactory
    private let health: WorkerHealth
    private let logger: Logger
    /// Set once by `run` when bound; read from any thread.
    private let bound = Mutex<Int?>(nil)

    public init(address: HostPort, metrics: PushlineMetricsFactory, health: WorkerHealth, logger: Logger) {
        self.address = address
        self.metrics = metrics
        self.health = health
        self.logger = logger
    }

    /// The port bound once running (useful with port 0 in tests).
    public var port: Int? { bound.withLock { $0 } }

    public func run() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let metrics = self.metrics
        let health = self.health
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.pipeline.configureHTTPServerPipeline().flatMapThrowing {
                        try channel.pipeline.syncOperations.addHandler(MetricsHTTPHandler(metrics: metrics, health: health))
                    }
                }
                .bind(host: address.host, port: address.port).get()
        } catch {
            try? await group.shutdownGracefully()
            throw ConfigurationProblems(["metrics.listen: cannot listen on \(address): \(error)"])
        }
        let port = channel.localAddress?.port
        bound.withLock { $0 = port }
        logger.info("metrics listening", metadata: ["address": "\(address.host):\(port ?? address.port)"])
        // Stops on graceful shutdown (after every other service: it is first in the service group)
        // and on cancellation (another service failed: the process is ending).
        await withTaskCancellationOrGracefulShutdownHandler {
            try? await channel.closeFuture.get()
        } onCancelOrGracefulShutdown: {
            channel.close(promise: nil)
        }
        try? await group.shutdownGracefully()
    }
}

final class MetricsHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let metrics: PushlineMetricsFactory
    private let health: WorkerHealth
    private var path = ""
    private var keepAlive = true

    init(metrics: PushlineMetricsFactory, health: WorkerHealth) {
        self.metrics = metrics
        self.health = health
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            path = head.uri.split(separator: "?").first.map(String.init) ?? head.uri
            keepAlive = head.isKeepAlive
        case .body:
            break
        case .end:
            let (status, contentType, body): (HTTPResponseStatus, String, [UInt8])
            switch path {
            case "/metrics":
                (status, contentType, body) = (.ok, "text/plain; version=0.0.4; charset=utf-8", metrics.exposition())
            case "/healthz":
                (status, contentType, body) = (.ok, "text/plain", Array("ok\n".utf8))
            case "/readyz":
                if let reason = health.notReadyReason() {
                    (status, contentType, body) = (.serviceUnavailable, "text/plain", Array("not ready: \(reason)\n".utf8))
                } else {
                    (status, contentType, body) = (.ok, "text/plain", Array("ready\n".utf8))
                }
            default:
                (status, contentType, body) = (.notFound, "text/plain", Array("not found; try /metrics, /healthz, /readyz\n".utf8))
            }
            var headers = HTTPHeaders()
            headers.add(name: "content-type", value: contentType)
            headers.add(name: "content-length", value: String(body.count))
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
            if keepAlive {
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            } else {
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                    channel.close(promise: nil)
                }
            }
        }
    }
}

@available(*, unavailable)
extension MetricsHTTPHandler: Sendable {}
