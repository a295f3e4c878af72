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
    /// The address each direct connection goes to (spread over the host's addresses).
    var addresses: ConnectionAddresses
    var logger: Logger

    var target: String { proxy.map { "\($0) (proxy)" } ?? "\(endpoint)" }

    func connect(_ connection: PooledConnection) -> EventLoopFuture<any Channel> {
        let (endpoint, logger) = (self.endpoint, self.logger)
        let bootstrap = APNSBootstrap(endpoint: endpoint, proxy: proxy, connectTimeout: connectTimeout, addresses: addresses)
        return bootstrap.connect(
            on: connection.eventLoop,
            protocols: { try protocolHandlers(for: connection) },
            tail: { ConnectionEvents(connection: connection) },
            established: { context in
                connection.installed(try context.pipeline.syncOperations.handler(type: HTTP2ClientHandler.self))
            },
            failed: { proxy, error in
                logger.warning(
                    "APNs connection through the proxy failed",
                    metadata: [
                        "slot": "\(connection.slot)", "proxy": "\(proxy)", "endpoint": "\(endpoint)", "error": "\(error)",
                    ]
                )
                connection.setupFailed()
            }
        ).map { channel in
            logger.info(
                "APNs connection opened",
                metadata: [
                    "slot": "\(connection.slot)", "endpoint": "\(endpoint)",
                    "address": "\(channel.remoteAddress.flatMap(\.ipAddress) ?? "?")",
                ]
            )
            return channel
        }
    }

    /// TLS (ALPN h2, SNI and verification for the endpoint) and HTTP/2, in pipeline order.
    private func protocolHandlers(for connection: PooledConnection) throws -> [any ChannelHandler] {
        let tls = try TLSHandler(context: tlsContext, serverHostname: endpoint.host)
        return [tls, connection.makeHTTP2Handler()]
    }
}
