import NIOCore

/// The first handler of a connection through a proxy: sends `CONNECT host:port`, reads the
/// proxy's answer, and on 2xx calls `established` (which adds TLS and HTTP/2 after this handler)
/// and removes itself; anything else calls `failed` once. Lives on the channel's event loop.
final class HTTPConnectHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The most bytes of a proxy's answer before its blank line (a sane one is a few hundred).
    static let maxAnswerBytes = 16 * 1024

    private let target: String
    private let authorization: String?
    private let established: (ChannelHandlerContext) throws -> Void
    private let failed: (any Error) -> Void
    private var answer: ByteBuffer?
    private var requested = false
    private var finished = false

    /// - Parameters:
    ///   - target: `host:port` to tunnel to (IPv6 hosts in brackets).
    ///   - authorization: the `Proxy-Authorization` value, if any.
    init(
        target: String,
        authorization: String?,
        established: @escaping (ChannelHandlerContext) throws -> Void,
        failed: @escaping (any Error) -> Void
    ) {
        self.target = target
        self.authorization = authorization
        self.established = established
        self.failed = failed
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { request(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        request(context: context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !finished else {
            context.fireChannelRead(data)
            return
        }
        var bytes = unwrapInboundIn(data)
        if answer == nil {
            answer = bytes
        } else {
            answer!.writeBuffer(&bytes)
        }
        guard let answer, let end = Self.headEnd(in: answer) else {
            if (answer?.readableBytes ?? 0) > Self.maxAnswerBytes { fail(context: context, APNSProxyError.malformedResponse) }
            return
        }
        let head = String(decoding: answer.readableBytesView.prefix(end), as: UTF8.self)
        let statusLine = head.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
        let words = statusLine.split(separator: " ", maxSplits: 2)
        guard words.count >= 2, words[0].hasPrefix("HTTP/1."), let status = Int(words[1]) else {
            fail(context: context, APNSProxyError.malformedResponse)
            return
        }
        guard (200..<300).contains(status) else {
            fail(context: context, APNSProxyError.refused(status: status, line: statusLine))
            return
        }
        finished = true
        var rest = answer
        rest.moveReaderIndex(forwardBy: end + 4)
        self.answer = nil
        do {
            try established(context)
        } catch {
            fail(context: context, error)
            return
        }
        // Bytes after the answer belong to the tunnel (the TLS handler is next now).
        if rest.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(rest)) }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !finished { fail(context: context, APNSProxyError.closedBeforeAnswer) }
        context.fireChannelInactive()
    }

    private func request(context: ChannelHandlerContext) {
        guard !requested else { return }
        requested = true
        var head = "CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n"
        if let authorization { head += "Proxy-Authorization: \(authorization)\r\n" }
        head += "\r\n"
        context.writeAndFlush(NIOAny(context.channel.allocator.buffer(string: head)), promise: nil)
    }

    private func fail(context: ChannelHandlerContext, _ error: any Error) {
        guard !finished else { return }
        finished = true
        answer = nil
        failed(error)
        context.close(promise: nil)
    }

    /// The offset of the blank line (`\r\n\r\n`) ending the head, if it has arrived.
    static func headEnd(in buffer: ByteBuffer) -> Int? {
        let view = buffer.readableBytesView
        return view.firstRange(of: [13, 10, 13, 10]).map { $0.lowerBound - view.startIndex }
    }
}

@available(*, unavailable)
extension HTTPConnectHandler: Sendable {}
