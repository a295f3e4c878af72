import NIOCore

/// TLS over OpenSSL as a `ChannelDuplexHandler`, client or server (the `TLSContext`'s role).
///
/// Pipeline: socket -> TLSHandler -> HTTP/2. Inbound it takes ciphertext `ByteBuffer`s and fires
/// plaintext `ByteBuffer`s (all plaintext available per read, usually one buffer); outbound it
/// takes plaintext `ByteBuffer`s and writes ciphertext.
///
/// - Writes before the handshake completes are buffered and sent after it, with a flush if one
///   was requested meanwhile.
/// - Writes between two flushes are coalesced: small buffers are packed into ~16 KiB TLS records,
///   and all records leave in one `write` and one socket `flush` per `flush`. The write promises
///   complete when that socket write does.
/// - Fires `TLSUserEvent.handshakeCompleted(negotiatedProtocol:)` once the handshake (and ALPN,
///   when required) succeeded. On failure it fires `errorCaught(TLSError)` and closes the channel.
/// - `close` sends pending writes, then close_notify, then closes once written (it does not
///   wait for the peer's close_notify). A close_notify from the peer is answered and the channel closed.
/// - EOF without close_notify after the handshake started fires `TLSError.uncleanShutdown`.
///
/// After the handshake, `negotiatedProtocol` and `peerCertificate` (a server's view of a verified
/// client certificate: `peerCertificate?.subject.userID`) can be read on the event loop, e.g. via
/// `context.pipeline.syncOperations.handler(type: TLSHandler.self)`.
public final class TLSHandler: ChannelDuplexHandler {
    public typealias InboundIn = ByteBuffer
    public typealias InboundOut = ByteBuffer
    public typealias OutboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    private let connection: TLSConnection
    // `@exclusivity(unchecked)` on the hot properties: confined to the channel's event loop and
    // never accessed re-entrantly; their run-time checks showed in the worker's profile
    // (docs/architecture.md, "Unsafe constructs on the hot path").
    @exclusivity(unchecked) private var state = TLSHandlerStateMachine()
    /// Plaintext written but not yet encrypted (before the handshake or before the next flush).
    @exclusivity(unchecked) private var pendingWrites = CircularBuffer<ByteBuffer>(initialCapacity: 16)
    /// The promises of all `pendingWrites`, chained into one.
    @exclusivity(unchecked) private var pendingPromise: EventLoopPromise<Void>?
    /// Packs small plaintext writes into full records; never handed out, so its storage is reused.
    @exclusivity(unchecked) private var coalescing: ByteBuffer
    /// Receives plaintext; its storage is reused when the next handler has released the last one.
    @exclusivity(unchecked) private var plaintext: ByteBuffer
    /// The promise of a close in progress (close_notify being written).
    private var closePromise: EventLoopPromise<Void>?

    private static let recordSize = 16 * 1024
    /// Writes at least this large are encrypted in place instead of being copied into `coalescing`.
    private static let directWriteThreshold = 8 * 1024

    /// The ALPN protocol agreed in the handshake ("h2"); nil before it completes or without ALPN.
    public private(set) var negotiatedProtocol: String?
    /// The peer's verified certificate, once the handshake completed (nil if it sent none).
    public private(set) var peerCertificate: X509Certificate?

    /// - Parameters:
    ///   - context: the shared context; its configuration's role makes this a client or server.
    ///   - serverHostname: clients: overrides `TLSConfiguration.serverHostname` for SNI and verification.
    public init(context: TLSContext, serverHostname: String? = nil) throws {
        let allocator = ByteBufferAllocator()
        self.connection = try TLSConnection(context: context, serverHostname: serverHostname, allocator: allocator)
        self.coalescing = allocator.buffer(capacity: Self.recordSize + Self.directWriteThreshold)
        self.plaintext = allocator.buffer(capacity: Self.recordSize)
    }

    // MARK: lifecycle

    public func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive {
            activate(context: context)
        }
    }

    public func channelActive(context: ChannelHandlerContext) {
        activate(context: context)
        context.fireChannelActive()
    }

    private func activate(context: ChannelHandlerContext) {
        guard state.activate() else { return }
        handshake(context: context)
    }

    public func channelInactive(context: ChannelHandlerContext) {
        let action = state.channelInactive()
        failPendingWrites(ChannelError.ioOnClosedChannel)
        if action == .uncleanShutdown {
            context.fireErrorCaught(TLSError.uncleanShutdown)
        }
        context.fireChannelInactive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        failPendingWrites(ChannelError.ioOnClosedChannel)
    }

    // MARK: inbound

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let ciphertext = unwrapInboundIn(data)
        switch state.ciphertextReceived() {
        case .handshake:
            connection.receiveCiphertext(ciphertext)
            handshake(context: context)
        case .readApplicationData:
            connection.receiveCiphertext(ciphertext)
            readApplicationData(context: context)
        case .discard:
            break
        }
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        context.fireChannelReadComplete()
    }

    private func handshake(context: ChannelHandlerContext) {
        switch connection.handshake() {
        case .incomplete:
            sendCiphertext(context: context, promise: nil)
        case .complete:
            sendCiphertext(context: context, promise: nil)
            handshakeCompleted(context: context)
        case .closed:
            fail(context: context, error: TLSError.handshakeFailed(verification: nil, OpenSSLErrorStack(entries: [])))
        case .failed(let stack):
            fail(context: context, error: TLSError.handshakeFailed(verification: connection.verificationFailure, stack))
        }
    }

    private func handshakeCompleted(context: ChannelHandlerContext) {
        let negotiated = connection.negotiatedProtocol
        let configuration = connection.context.configuration
        if configuration.requireALPN, !configuration.alpnProtocols.isEmpty,
            negotiated.map({ configuration.alpnProtocols.contains($0) }) != true
        {
            fail(context: context, error: TLSError.alpnNotNegotiated(offered: configuration.alpnProtocols, selected: negotiated))
            return
        }
        negotiatedProtocol = negotiated
        peerCertificate = connection.peerCertificate
        let flushNow = state.handshakeCompleted()
        context.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: negotiated))
        if flushNow, state.state == .active {
            encryptAndFlush(context: context)
        }
        // Application data may have arrived in the same read as the handshake's last message.
        if connection.unconsumedCiphertextBytes > 0, state.state == .active {
            readApplicationData(context: context)
        }
    }

    /// Decrypts everything received so far and fires it, normally as one buffer.
    private func readApplicationData(context: ChannelHandlerContext) {
        if plaintext.readableBytes == 0 {
            // Plaintext is never longer than the ciphertext carrying it.
            plaintext.clear(minimumCapacity: max(Self.recordSize, connection.unconsumedCiphertextBytes))
        }
        while true {
            if plaintext.writableBytes < 512 {
                firePlaintext(context: context)
                guard state.state == .active || state.state == .closing else { return }
            }
            switch connection.read(into: &plaintext) {
            case .complete:
                continue
            case .incomplete:
                firePlaintext(context: context)
                // A TLS 1.3 KeyUpdate or session ticket may need an answer.
                sendCiphertext(context: context, promise: nil)
                return
            case .closed:
                firePlaintext(context: context)
                closeNotifyReceived(context: context)
                return
            case .failed(let stack):
                firePlaintext(context: context)
                fail(context: context, error: TLSError.readFailed(stack))
                return
            }
        }
    }

    private func firePlaintext(context: ChannelHandlerContext) {
        guard plaintext.readableBytes > 0 else { return }
        let decrypted = plaintext
        // Moving only the indices leaves `decrypted` intact; the next clear reuses the storage
        // if the next handler has released it by then, and allocates otherwise.
        plaintext.moveReaderIndex(to: plaintext.writerIndex)
        context.fireChannelRead(wrapInboundOut(decrypted))
        plaintext.clear(minimumCapacity: Self.recordSize)
    }

    private func closeNotifyReceived(context: ChannelHandlerContext) {
        switch state.closeNotifyReceived() {
        case .replyThenClose:
            _ = connection.shutdown()
            let written = context.eventLoop.makePromise(of: Void.self)
            sendCiphertext(context: context, promise: written)
            written.futureResult.assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        case .alreadyClosing:
            break
        }
    }

    // MARK: outbound

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch state.write() {
        case .buffer:
            pendingWrites.append(unwrapOutboundIn(data))
            if let promise {
                if let pendingPromise {
                    pendingPromise.futureResult.cascade(to: promise)
                } else {
                    pendingPromise = promise
                }
            }
        case .fail:
            promise?.fail(ChannelError.ioOnClosedChannel)
        }
    }

    public func flush(context: ChannelHandlerContext) {
        switch state.flush() {
        case .encryptAndFlush:
            encryptAndFlush(context: context)
        case .deferUntilHandshakeCompletes, .ignore:
            break
        }
    }

    /// Encrypts all pending writes and sends the ciphertext as one write plus one flush.
    private func encryptAndFlush(context: ChannelHandlerContext) {
        guard !pendingWrites.isEmpty else { return }
        let promise = pendingPromise
        pendingPromise = nil
        if case .failed(let stack) = encryptPendingWrites() {
            promise?.fail(TLSError.writeFailed(stack))
            fail(context: context, error: TLSError.writeFailed(stack))
            return
        }
        sendCiphertext(context: context, promise: promise)
    }

    private func encryptPendingWrites() -> TLSOperationResult<Void> {
        coalescing.clear()
        while var buffer = pendingWrites.popFirst() {
            if buffer.readableBytes >= Self.directWriteThreshold {
                if case .failed(let stack) = encryptCoalesced() { return .failed(stack) }
                if case .failed(let stack) = connection.write(buffer) { return .failed(stack) }
                continue
            }
            coalescing.writeBuffer(&buffer)
            if coalescing.readableBytes >= Self.recordSize {
                if case .failed(let stack) = encryptCoalesced() { return .failed(stack) }
            }
        }
        return encryptCoalesced()
    }

    private func encryptCoalesced() -> TLSOperationResult<Void> {
        guard coalescing.readableBytes > 0 else { return .complete(()) }
        let result = connection.write(coalescing)
        coalescing.clear()
        return result
    }

    /// Writes and flushes whatever ciphertext OpenSSL produced; completes `promise` either way.
    private func sendCiphertext(context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        if let ciphertext = connection.takeCiphertext() {
            context.writeAndFlush(wrapOutboundOut(ciphertext), promise: promise)
        } else {
            promise?.succeed(())
        }
    }

    public func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode == .all else {
            context.close(mode: mode, promise: promise)
            return
        }
        switch state.closeRequested() {
        case .closeNow:
            failPendingWrites(ChannelError.ioOnClosedChannel)
            context.close(promise: promise)
        case .joinClose:
            if let promise {
                if let closePromise {
                    closePromise.futureResult.cascade(to: promise)
                } else {
                    closePromise = promise
                }
            }
        case .sendCloseNotifyThenClose:
            closePromise = promise
            // Writes issued before the close are still sent, in the same socket write as close_notify.
            let writesPromise = pendingPromise
            pendingPromise = nil
            let written = context.eventLoop.makePromise(of: Void.self)
            switch encryptPendingWrites() {
            case .failed(let stack):
                writesPromise?.fail(TLSError.writeFailed(stack))
            default:
                if let writesPromise { written.futureResult.cascade(to: writesPromise) }
            }
            _ = connection.shutdown()
            sendCiphertext(context: context, promise: written)
            written.futureResult.assumeIsolated().whenComplete { [weak self] _ in
                let closePromise = self?.closePromise
                self?.closePromise = nil
                context.close(promise: closePromise)
            }
        }
    }

    // MARK: failure

    private func fail(context: ChannelHandlerContext, error: TLSError) {
        switch state.failed() {
        case .fireErrorAndClose:
            // An alert OpenSSL queued (e.g. bad_certificate) goes out before the close.
            sendCiphertext(context: context, promise: nil)
            failPendingWrites(error)
            context.fireErrorCaught(error)
            let closePromise = self.closePromise
            self.closePromise = nil
            context.close(promise: closePromise)
        case .ignore:
            break
        }
    }

    private func failPendingWrites(_ error: any Error) {
        pendingWrites.removeAll()
        let promise = pendingPromise
        pendingPromise = nil
        promise?.fail(error)
    }
}

@available(*, unavailable)
extension TLSHandler: Sendable {}
