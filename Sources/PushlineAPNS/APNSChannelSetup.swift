import Logging
import NIOCore
import NIOPosix
import PushlineAPNSCore
import PushlineHTTP2
import PushlineTLS

/// The channel of a connection to APNs: TCP (through an HTTP proxy's CONNECT tunnel when one is
/// configured), TLS with ALPN h2, SNI and verification for the endpoint, then HTTP/2.
struct APNSChannelSetup: ConnectionChannelSetup {
    var endpoint: APNSEndpoint
    var proxy: APNSProxy?
    var tlsContext: TLSContext
    var connectTimeout: Duration
    var logger: Logger

    var target: String { proxy.map { "\($0) (proxy)" } ?? "\(endpoint)" }

    func connect(_ connection: PooledConnection) -> EventLoopFuture<any Channel> {
        let bootstrap = ClientBootstrap(group: connection.eventLoop)
            .connectTimeout(TimeAmount(connectTimeout))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let tail = ConnectionEvents(connection: connection)
                    guard let proxy else {
                        try channel.pipeline.syncOperations.addHandlers(try protocolHandlers(for: connection) + [tail])
                        return
                    }
                    // Through a proxy: CONNECT first; TLS and HTTP/2 go in once the tunnel is open.
                    let tunnel = HTTPConnectHandler(
                        target: HostPort(host: endpoint.host, port: endpoint.port).description,
                        authorization: proxy.authorization,
                        established: { context in
                            // One at a time, each after the previous: TLS right after the tunnel.
                            var previous = context.handler
                            for next in try protocolHandlers(for: connection) {
                                try context.pipeline.syncOperations.addHandler(next, position: .after(previous))
                                previous = next
                            }
                            connection.installed(try context.pipeline.syncOperations.handler(type: HTTP2ClientHandler.self))
                        },
                        failed: { error in
                            logger.warning(
                                "APNs connection through the proxy failed",
                                metadata: [
                                    "slot": "\(connection.slot)", "proxy": "\(proxy)", "endpoint": "\(endpoint)", "error": "\(error)",
                                ]
                            )
                            connection.setupFailed()
                        }
                    )
                    try channel.pipeline.syncOperations.addHandlers([tunnel, tail])
                }
            }
        // ClientBootstrap resolves the host on every connect: DNS is re-resolved for each new
        // connection, as APNs asks (its addresses change). Through a proxy, the proxy resolves it.
        let (host, port) = proxy.map { ($0.host, $0.port) } ?? (endpoint.host, endpoint.port)
        return bootstrap.connect(host: host, port: port)
    }

    /// TLS (ALPN h2, SNI and verification for the endpoint) and HTTP/2, in pipeline order.
    private func protocolHandlers(for connection: PooledConnection) throws -> [any ChannelHandler] {
        let tls = try TLSHandler(context: tlsContext, serverHostname: endpoint.host)
        return [tls, connection.makeHTTP2Handler()]
    }
}
