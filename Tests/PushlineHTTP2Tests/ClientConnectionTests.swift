import NIOCore
import NIOEmbedded
import Testing

@testable import PushlineHTTP2
@testable import PushlineHTTP2Server

/// `HTTP2ClientHandler` against `HTTP2ServerHandler`, each on an EmbeddedChannel (`InMemoryPair`):
/// stream limits, GOAWAY, RST_STREAM, PING and the end of a connection, with no socket.
@Suite struct ClientConnectionTests {
    /// Frames queued in one tick leave in a drain scheduled for the next. When the channel closes
    /// in between, that drain must write nothing and report nothing: the connection is over, and
    /// its delegate has heard `http2ClientClosed` last.
    @Test func aDrainScheduledBeforeTheChannelClosedWritesNothing() throws {
        let clientDelegate = RecordingClientDelegate()
        let pair = try InMemoryPair(delegate: RecordingServerDelegate(), clientDelegate: clientDelegate)
        try pair.interact()
        #expect(try pair.client.readOutbound(as: ByteBuffer.self) == nil)

        #expect(pair.clientHandler.goAway())
        let ping = pair.clientHandler.ping()
        // The channel closes before the scheduled drain runs (channelInactive now; the handler
        // leaves the pipeline in a later task, after the drain).
        pair.client.close(promise: nil)
        pair.client.embeddedEventLoop.run()

        #expect(try pair.client.readOutbound(as: ByteBuffer.self) == nil, "nothing written after the close")
        #expect(clientDelegate.log.last == "closed")
        #expect(!clientDelegate.log.contains("goAwaySent"))
        #expect(throws: HTTP2StreamError(.connectionClosed, streamID: nil)) { try ping.completedResult()?.get() }
    }
}
