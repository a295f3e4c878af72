import NIOCore
import PushlineTLS

/// The tail of a pooled connection's pipeline: turns TLS and error events into calls on the slot.
final class ConnectionEvents: ChannelInboundHandler {
    typealias InboundIn = Never
    private let connection: PooledConnection

    init(connection: PooledConnection) {
        self.connection = connection
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted? = event as? TLSUserEvent {
            connection.handshakeCompleted()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        connection.connectionError(error)
    }
}

@available(*, unavailable)
extension ConnectionEvents: Sendable {}
