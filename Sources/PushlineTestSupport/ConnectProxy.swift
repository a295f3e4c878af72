import NIOCore
import NIOPosix
import Synchronization

/// A loopback HTTP CONNECT proxy for tests: it records each CONNECT request's head and the first
/// byte the client sends through the tunnel (0x16 for a TLS handshake), then relays bytes both
/// ways. With `refuseWith`, it answers every CONNECT with that status instead.
public final class ConnectProxy: Sendable {
    /// What the proxy saw on one connection.
    public struct Tunnel: Sendable, Hashable {
        /// The request head, up to its blank line.
        public var head: String
        /// The first byte sent through the tunnel, nil when none was.
        public var firstByte: UInt8?
    }

    public let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let seen = Seen()

    /// The tunnels opened so far, in order.
    public var tunnels: [Tunnel] { seen.tunnels.withLock { $0 } }

    private final class Seen: Sendable {
        let tunnels = Mutex<[Tunnel]>([])
    }

    /// Starts listening on 127.0.0.1, on a port the kernel picks.
    public init(refuseWith status: Int? = nil) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let seen = self.seen
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ProxyFrontHandler(group: group, refuseWith: status) { tunnel in seen.tunnels.withLock { $0.append(tunnel) } }
                    )
                }
            }
        do {
            channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        self.group = group
        self.port = channel.localAddress?.port ?? 0
    }

    public func stop() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}

/// The client side of one proxied connection: reads the CONNECT head, dials the target, answers
/// 200 and relays.
private final class ProxyFrontHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let group: any EventLoopGroup
    private let refuseWith: Int?
    private let record: @Sendable (ConnectProxy.Tunnel) -> Void
    private var head = ""
    private var tunnel: ConnectProxy.Tunnel?
    private var partner: (any Channel)?

    init(group: any EventLoopGroup, refuseWith: Int?, record: @escaping @Sendable (ConnectProxy.Tunnel) -> Void) {
        self.group = group
        self.refuseWith = refuseWith
        self.record = record
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        if let partner {
            if var tunnel, tunnel.firstByte == nil, let first = bytes.readableBytesView.first {
                tunnel.firstByte = first
                self.tunnel = tunnel
                record(tunnel)
            }
            partner.writeAndFlush(bytes, promise: nil)
            return
        }
        head += String(decoding: bytes.readableBytesView, as: UTF8.self)
        guard let end = head.range(of: "\r\n\r\n") else { return }
        head = String(head[..<end.lowerBound])
        let words = head.split(separator: " ")
        if let status = refuseWith {
            record(.init(head: head, firstByte: nil))
            let answer = "HTTP/1.1 \(status) Refused\r\nContent-Length: 0\r\n\r\n"
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: answer))).assumeIsolated()
                .whenComplete { _ in context.close(promise: nil) }
            return
        }
        guard words.count >= 2, words[0] == "CONNECT", let colon = words[1].lastIndex(of: ":"),
            let port = Int(words[1][words[1].index(after: colon)...])
        else {
            context.close(promise: nil)
            return
        }
        let host = String(words[1][..<colon]).trimmingCharacters(in: ["[", "]"])
        let front = context.channel
        ClientBootstrap(group: context.eventLoop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(RelayHandler(to: front)) }
            }
            .connect(host: host, port: port)
            .assumeIsolated()
            .whenComplete { [self] result in
                switch result {
                case .success(let back):
                    partner = back
                    tunnel = .init(head: head, firstByte: nil)
                    let answer = "HTTP/1.1 200 Connection established\r\n\r\n"
                    context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: answer)), promise: nil)
                case .failure:
                    record(.init(head: head, firstByte: nil))
                    context.close(promise: nil)
                }
            }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let tunnel, tunnel.firstByte == nil { record(tunnel) }
        partner?.close(promise: nil)
        context.fireChannelInactive()
    }
}

/// The target side: bytes from the target go back to the client; a close closes both.
private final class RelayHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let front: any Channel

    init(to front: any Channel) {
        self.front = front
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        front.writeAndFlush(unwrapInboundIn(data), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        front.close(promise: nil)
        context.fireChannelInactive()
    }
}
