import NIOCore
import NIOPosix
import PushlineAPNSCore

/// TCP to an APNs endpoint, directly or through an HTTP proxy's CONNECT tunnel, with the
/// protocol handlers (TLS, then HTTP/2) and a tail in its pipeline: the part the pool's
/// connections (`APNSChannelSetup`) and the channel-management client (`APNSChannelClient`) share.
struct APNSBootstrap {
    var endpoint: APNSEndpoint
    var proxy: APNSProxy?
    var connectTimeout: Duration
    /// Where a direct connection goes (a pool's connections: spread over the host's addresses);
    /// nil: to the host's first reachable address (`ClientBootstrap`'s own resolution). Through a
    /// proxy, the proxy resolves the host.
    var addresses: ConnectionAddresses? = nil

    /// Connects on `eventLoop`. Without a proxy the pipeline is `protocols()` then `tail()`; with
    /// one it is the tunnel then `tail()`, and once the tunnel is open `protocols()` go in right
    /// after it, one after the other, and `established` runs (or `failed`, once, if the tunnel
    /// never opens). Every closure runs on the channel's event loop.
    ///
    /// The host is resolved on every connect: DNS is re-resolved for each new connection, as APNs
    /// asks (its addresses change); with `addresses`, the connection goes to the address it
    /// picks, and the channel's address is returned with it. Through a proxy, the proxy resolves it.
    func connect(
        on eventLoop: any EventLoop,
        protocols: @escaping @Sendable () throws -> [any ChannelHandler],
        tail: @escaping @Sendable () -> any ChannelHandler,
        established: @escaping @Sendable (ChannelHandlerContext) throws -> Void = { _ in },
        failed: @escaping @Sendable (_ proxy: APNSProxy, _ error: any Error) -> Void
    ) -> EventLoopFuture<any Channel> {
        let (endpoint, proxy) = (self.endpoint, self.proxy)
        let connectTimeout = self.connectTimeout
        // Made where it connects: a bootstrap is not Sendable.
        let makeBootstrap: @Sendable () -> ClientBootstrap = {
            ClientBootstrap(group: eventLoop)
                .connectTimeout(TimeAmount(connectTimeout))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        guard let proxy else {
                            try channel.pipeline.syncOperations.addHandlers(try protocols() + [tail()])
                            return
                        }
                        let tunnel = HTTPConnectHandler(
                            target: HostPort(host: endpoint.host, port: endpoint.port).description,
                            authorization: proxy.authorization,
                            established: { context in
                                var previous = context.handler
                                for next in try protocols() {
                                    try context.pipeline.syncOperations.addHandler(next, position: .after(previous))
                                    previous = next
                                }
                                try established(context)
                            },
                            failed: { error in failed(proxy, error) }
                        )
                        try channel.pipeline.syncOperations.addHandlers([tunnel, tail()])
                    }
                }
        }
        if proxy == nil, let addresses {
            return addresses.next(host: endpoint.host, port: endpoint.port, on: eventLoop).flatMap { address in
                makeBootstrap().connect(to: address).map { channel in
                    addresses.opened(address)
                    channel.closeFuture.whenComplete { _ in addresses.closed(address) }
                    return channel
                }.flatMapErrorThrowing { error in
                    addresses.connectFailed(address)
                    throw error
                }
            }
        }
        let (host, port) = proxy.map { ($0.host, $0.port) } ?? (endpoint.host, endpoint.port)
        return makeBootstrap().connect(host: host, port: port)
    }
}
