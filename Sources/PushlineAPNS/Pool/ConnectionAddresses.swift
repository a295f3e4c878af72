import Metrics
import NIOCore
import NIOPosix
import Synchronization

/// A pool's choice of address for each new connection: resolves the host afresh (on NIO's thread
/// pool), picks an address with `AddressSpread`, and hears whether the connect worked and when
/// the connection closed. Exports `pushline_apns_connections_by_address{app,address}`: the pool's
/// open connections on each address. Called from the connections' event loops.
final class ConnectionAddresses: Sendable {
    private let resolver: HostResolver
    private let app: String
    private let spread = Mutex(AddressSpread<SocketAddress>())
    private let gauges = Mutex<[SocketAddress: Gauge]>([:])

    init(resolver: HostResolver, app: String) {
        self.resolver = resolver
        self.app = app
    }

    /// The address the next connection to `host:port` goes to.
    func next(host: String, port: Int, on eventLoop: any EventLoop) -> EventLoopFuture<SocketAddress> {
        let resolver = self.resolver
        return NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) {
            try resolver.resolve(host, port)
        }.flatMapThrowing { [self] resolved in
            guard let address = self.spread.withLock({ $0.choose(from: resolved) }) else {
                throw HostResolverError(host: host, message: "no address")
            }
            return address
        }
    }

    /// A connection to `address` is open.
    func opened(_ address: SocketAddress) {
        let count = spread.withLock {
            $0.opened(address)
            return $0.open[address, default: 0]
        }
        gauge(address).record(count)
    }

    /// The connection to `address` closed.
    func closed(_ address: SocketAddress) {
        let count = spread.withLock {
            $0.closed(address)
            return $0.open[address, default: 0]
        }
        gauge(address).record(count)
    }

    /// A connect to `address` failed.
    func connectFailed(_ address: SocketAddress) {
        spread.withLock { $0.connectFailed(address) }
    }

    /// The pool's open connections per address, for tests and status.
    var openConnections: [SocketAddress: Int] {
        spread.withLock { $0.open }
    }

    private func gauge(_ address: SocketAddress) -> Gauge {
        gauges.withLock { gauges in
            if let gauge = gauges[address] { return gauge }
            let gauge = Gauge(
                label: "pushline_apns_connections_by_address",
                dimensions: [("app", app), ("address", address.ipAddress ?? "\(address)")]
            )
            gauges[address] = gauge
            return gauge
        }
    }
}
