import NIOCore
import NIOEmbedded
import Testing

@testable import PushlineHTTP2
@testable import PushlineHTTP2Server

/// A hand-written client that ignores the server's SETTINGS_MAX_CONCURRENT_STREAMS: the server
/// must count the violation (a mock reports it) rather than hide it.
@Suite struct LimitViolationTests {
    static func frame(type: UInt8, flags: UInt8, streamID: UInt32, payload: [UInt8] = []) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeBytes([UInt8(payload.count >> 16 & 0xff), UInt8(payload.count >> 8 & 0xff), UInt8(payload.count & 0xff), type, flags])
        buffer.writeInteger(streamID)
        buffer.writeBytes(payload)
        return buffer
    }

    /// GET / with :authority "a": static-table entries and one literal (HPACK, RFC 7541 appendix A).
    static let getHeaderBlock: [UInt8] = [0x82, 0x86, 0x84, 0x41, 0x01, 0x61]

    @Test func streamsBeyondTheAcknowledgedLimitAreCounted() throws {
        let delegate = RecordingServerDelegate()
        delegate.holdResponses = true
        let handler = HTTP2ServerHandler(configuration: HTTP2ServerConfiguration(maxConcurrentStreams: 1), delegate: delegate)
        let server = EmbeddedChannel(handler: handler)
        try server.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()

        var hello = ByteBuffer(string: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        var settings = Self.frame(type: 0x4, flags: 0, streamID: 0)
        hello.writeBuffer(&settings)
        try server.writeInbound(hello)
        while try server.readOutbound(as: ByteBuffer.self) != nil {}

        // Acknowledge the server's SETTINGS (limit 1), then open two streams anyway.
        var burst = Self.frame(type: 0x4, flags: 0x1, streamID: 0)
        var first = Self.frame(type: 0x1, flags: 0x5, streamID: 1, payload: Self.getHeaderBlock)
        var second = Self.frame(type: 0x1, flags: 0x5, streamID: 3, payload: Self.getHeaderBlock)
        burst.writeBuffer(&first)
        burst.writeBuffer(&second)
        try server.writeInbound(burst)

        #expect(handler.acknowledgedMaxConcurrentStreams == 1)
        #expect(handler.stats.limitViolations == 1)
        #expect(handler.stats.maxOpenStreams == 1)
        #expect(delegate.requests.map(\.streamID) == [1])
        // nghttp2 answers the violation with GOAWAY PROTOCOL_ERROR, as APNs does.
        #expect(handler.sentGoAway?.errorCode == .protocolError)
        #expect(!server.isActive)
    }
}
