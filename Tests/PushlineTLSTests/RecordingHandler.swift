import NIOCore
import PushlineTLS

/// Sits above TLSHandler in tests: records TLS events, errors and plaintext, completes promises
/// for the test to await, and optionally echoes what it receives.
final class RecordingHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Promises a test awaits; all are completed at most once.
    struct Expectations: Sendable {
        var handshake: EventLoopPromise<String?>
        var firstError: EventLoopPromise<any Error>
        var received: EventLoopPromise<ByteBuffer>
        /// The verified peer certificate's subject, read from TLSHandler at handshakeCompleted
        /// (as the mock APNs server reads the client certificate's UID).
        var peerSubject: EventLoopPromise<DistinguishedName?>
        var expectedBytes: Int

        init(eventLoop: any EventLoop, expectedBytes: Int = 0) {
            handshake = eventLoop.makePromise()
            firstError = eventLoop.makePromise()
            received = eventLoop.makePromise()
            peerSubject = eventLoop.makePromise()
            self.expectedBytes = expectedBytes
        }
    }

    private let expectations: Expectations
    private let echo: Bool
    private var handshakeDone = false
    private var errorSeen = false
    private var receivedDone = false
    private(set) var events: [TLSUserEvent] = []
    private(set) var errors: [any Error] = []
    private(set) var receivedBytes: ByteBuffer = ByteBuffer()
    private(set) var readCount = 0

    init(expectations: Expectations, echo: Bool = false) {
        self.expectations = expectations
        self.echo = echo
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent {
            events.append(event)
            if case .handshakeCompleted(let negotiated) = event, !handshakeDone {
                handshakeDone = true
                let tls = try? context.pipeline.syncOperations.handler(type: TLSHandler.self)
                expectations.peerSubject.succeed(tls?.peerCertificate?.subject)
                expectations.handshake.succeed(negotiated)
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        readCount += 1
        if echo {
            context.write(wrapOutboundOut(buffer), promise: nil)
        }
        receivedBytes.writeBuffer(&buffer)
        if !receivedDone, expectations.expectedBytes > 0, receivedBytes.readableBytes >= expectations.expectedBytes {
            receivedDone = true
            expectations.received.succeed(receivedBytes)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if echo { context.flush() }
        context.fireChannelReadComplete()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        errors.append(error)
        if !errorSeen {
            errorSeen = true
            expectations.firstError.succeed(error)
        }
        if !handshakeDone {
            handshakeDone = true
            expectations.handshake.fail(error)
            expectations.peerSubject.fail(error)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        struct ClosedBeforeExpectation: Error {}
        if !handshakeDone {
            handshakeDone = true
            expectations.handshake.fail(ClosedBeforeExpectation())
            expectations.peerSubject.fail(ClosedBeforeExpectation())
        }
        if !receivedDone {
            receivedDone = true
            expectations.received.fail(ClosedBeforeExpectation())
        }
        if !errorSeen {
            errorSeen = true
            expectations.firstError.fail(ClosedBeforeExpectation())
        }
        context.fireChannelInactive()
    }
}
