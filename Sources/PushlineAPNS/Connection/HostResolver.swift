import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Resolves an APNs host to its addresses for each new connection (never cached: APNs' addresses
/// change). Blocking: `ConnectionAddresses` runs it on NIO's thread pool, never on an event loop.
/// Tests stand in with a name that resolves to several loopback addresses.
public struct HostResolver: Sendable {
    public var resolve: @Sendable (_ host: String, _ port: Int) throws -> [SocketAddress]

    public init(resolve: @escaping @Sendable (_ host: String, _ port: Int) throws -> [SocketAddress]) {
        self.resolve = resolve
    }

    /// The system's resolver (`getaddrinfo`, TCP), every address in its order, duplicates removed.
    public static let system = HostResolver { host, port in
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw HostResolverError(host: host, message: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(first) }
        var addresses: [SocketAddress] = []
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next {
            if let raw = info.pointee.ai_addr {
                switch info.pointee.ai_family {
                case AF_INET:
                    let address = raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { SocketAddress($0.pointee, host: host) }
                    if !addresses.contains(address) { addresses.append(address) }
                case AF_INET6:
                    let address = raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { SocketAddress($0.pointee, host: host) }
                    if !addresses.contains(address) { addresses.append(address) }
                default:
                    break
                }
            }
            next = info.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw HostResolverError(host: host, message: "no address") }
        return addresses
    }
}

/// A host that did not resolve.
public struct HostResolverError: Error, CustomStringConvertible {
    public var host: String
    public var message: String

    public init(host: String, message: String) {
        self.host = host
        self.message = message
    }

    public var description: String { "cannot resolve \(host): \(message)" }
}
