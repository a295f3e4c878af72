import NIOCore
import NIOEmbedded
import Testing

@testable import PushlineHTTP2
@testable import PushlineHTTP2Server

/// `HTTP2ClientHandler` against `HTTP2ServerHandler`, each on an EmbeddedChannel (`InMemoryPair`):
/// stream limits, GOAWAY, RST_STREAM, PING and the end of a connection, with no socket.
@Suite struct ClientConnectionTests {
    /// A client and a server that holds its answers until the test gives them, the server
    /// allowing `maxConcurrentStreams`.
    static func holdingPair(
        maxConcurrentStreams: UInt32
    ) throws -> (InMemoryPair, RecordingServerDelegate, RecordingClientDelegate) {
        let serverDelegate = RecordingServerDelegate()
        serverDelegate.holdResponses = true
        let clientDelegate = RecordingClientDelegate()
        let pair = try InMemoryPair(
            server: HTTP2ServerConfiguration(maxConcurrentStreams: maxConcurrentStreams),
            delegate: serverDelegate,
            clientDelegate: clientDelegate
        )
        return (pair, serverDelegate, clientDelegate)
    }

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

    // MARK: SETTINGS_MAX_CONCURRENT_STREAMS

    @Test func availableStreamsFollowThePeersLimitAndTheStreamsInFlight() throws {
        let serverDelegate = RecordingServerDelegate()
        serverDelegate.holdResponses = true
        let clientDelegate = RecordingClientDelegate()
        let pair = try InMemoryPair(delegate: serverDelegate, clientDelegate: clientDelegate)
        let client = pair.clientHandler
        // Before the server's SETTINGS: the assumed limit (1).
        #expect(!client.peerSettingsReceived && client.peerMaxConcurrentStreams == 1 && client.availableStreams == 1)
        let first = try pair.submitTagged(1)
        #expect(client.availableStreams == 0)
        #expect(client.openStreams == 0, "submitted, its HEADERS not sent yet")
        try pair.interact()
        #expect(client.peerSettingsReceived && client.peerMaxConcurrentStreams == 100)
        #expect(client.availableStreams == 99 && client.openStreams == 1)
        #expect(pair.serverHandler.openStreams == 1)

        pair.serverHandler.respond(to: first, status: 200)
        try pair.interact()
        #expect(try clientDelegate.result(1)?.get().status == 200)
        #expect(client.availableStreams == 100 && client.openStreams == 0)
        // The same limit again is no news to the delegate; a new one is.
        pair.serverHandler.setMaxConcurrentStreams(100)
        try pair.interact()
        pair.serverHandler.setMaxConcurrentStreams(10)
        try pair.interact()
        #expect(clientDelegate.peerMaxValues == [100, 10])
        #expect(client.peerMaxConcurrentStreams == 10 && client.availableStreams == 10)
    }

    /// A pool's way: submit while `availableStreams > 0`, the server answers one request at a
    /// time. At no point are more streams open than the server allows, on either side.
    @Test(arguments: [UInt32(1), 3])
    func aPoolWithinAvailableStreamsNeverExceedsTheServersLimit(limit: UInt32) throws {
        let (pair, serverDelegate, clientDelegate) = try Self.holdingPair(maxConcurrentStreams: limit)
        try pair.interact()
        #expect(pair.clientHandler.peerMaxConcurrentStreams == Int(limit))
        let withinLimit = {
            #expect(pair.clientHandler.openStreams <= Int(limit))
            #expect(pair.serverHandler.openStreams <= Int(limit))
        }
        let total = 12
        var submitted = 0
        var answered = 0
        while answered < total {
            while submitted < total, pair.clientHandler.availableStreams > 0 {
                try pair.submitTagged(UInt64(submitted))
                submitted += 1
            }
            try pair.interact(eachStep: withinLimit)
            let oldest = try #require(serverDelegate.requests.dropFirst(answered).first)
            #expect(pair.serverHandler.respond(to: oldest.streamID, status: 200))
            answered += 1
            try pair.interact(eachStep: withinLimit)
        }
        #expect(serverDelegate.requests.count == total)
        #expect(pair.serverHandler.stats.maxOpenStreams == Int(limit))
        #expect(pair.serverHandler.stats.limitViolations == 0)
        #expect(clientDelegate.completed.count == total)
        #expect(clientDelegate.completed.allSatisfy { (try? $0.1.get().status) == 200 })
    }

    /// Submitted beyond the limit anyway: nghttp2 holds the rest back and sends each as a stream
    /// ends, so the server still never sees more than its limit.
    @Test func requestsBeyondTheLimitWaitInNghttp2AndNeverExceedIt() throws {
        let (pair, serverDelegate, clientDelegate) = try Self.holdingPair(maxConcurrentStreams: 2)
        try pair.interact()
        for id in 0..<6 { try pair.submitTagged(UInt64(id)) }
        #expect(pair.clientHandler.availableStreams == 0)
        let withinLimit = {
            #expect(pair.clientHandler.openStreams <= 2)
            #expect(pair.serverHandler.openStreams <= 2)
        }
        try pair.interact(eachStep: withinLimit)
        #expect(serverDelegate.requests.count == 2 && pair.clientHandler.openStreams == 2)
        var answered = 0
        while answered < serverDelegate.requests.count {
            pair.serverHandler.respond(to: serverDelegate.requests[answered].streamID, status: 200)
            answered += 1
            try pair.interact(eachStep: withinLimit)
        }
        #expect(answered == 6)
        #expect(pair.serverHandler.stats.maxOpenStreams == 2 && pair.serverHandler.stats.limitViolations == 0)
        #expect(clientDelegate.completed.map(\.0.id).sorted() == Array(0..<6))
        #expect(pair.clientHandler.availableStreams == 2)
    }

    /// The server lowers its limit below the streams open: they finish, and the client admits a
    /// new stream only once fewer than the new limit are in flight.
    @Test func aLoweredLimitAdmitsNewStreamsOnlyOnceTheOpenOnesEnd() throws {
        let (pair, _, clientDelegate) = try Self.holdingPair(maxConcurrentStreams: 3)
        try pair.interact()
        let streamIDs = try (0..<3).map { try pair.submitTagged(UInt64($0)) }
        try pair.interact()
        #expect(pair.serverHandler.openStreams == 3)
        pair.serverHandler.setMaxConcurrentStreams(1)
        try pair.interact()
        #expect(pair.clientHandler.peerMaxConcurrentStreams == 1)
        #expect(clientDelegate.peerMaxValues == [3, 1])
        var available: [Int] = []
        for streamID in streamIDs {
            #expect(pair.clientHandler.availableStreams == 0)
            pair.serverHandler.respond(to: streamID, status: 200)
            try pair.interact()
            available.append(pair.clientHandler.availableStreams)
        }
        #expect(available == [0, 0, 1])
        let next = try pair.submitTagged(3)
        try pair.interact()
        #expect(pair.serverHandler.openStreams == 1)
        pair.serverHandler.respond(to: next, status: 200)
        try pair.interact()
        #expect(clientDelegate.completed.count == 4 && clientDelegate.completed.allSatisfy { (try? $0.1.get().status) == 200 })
        #expect(pair.serverHandler.stats.limitViolations == 0)
    }

    // MARK: GOAWAY

    /// A GOAWAY whose error a request can cause (PROTOCOL_ERROR): the request nghttp2 still held
    /// back is unprocessed, the sent ones may be what the server refused (`connectionError`),
    /// whether above the last-stream-id or not, and no new stream is admitted.
    @Test func aGoAwayWithProtocolErrorBlamesTheSentRequestsOnly() throws {
        let (pair, serverDelegate, clientDelegate) = try Self.holdingPair(maxConcurrentStreams: 2)
        try pair.interact()
        // Streams 1 and 3 leave; 5 waits in nghttp2 behind the server's limit.
        let streamIDs = try (1...3).map { try pair.submitTagged(UInt64($0)) }
        #expect(streamIDs == [1, 3, 5])
        try pair.interact()
        #expect(serverDelegate.requests.map(\.streamID) == [1, 3])
        clientDelegate.log.removeAll()

        pair.serverHandler.sendGoAway(lastStreamID: 1, errorCode: .protocolError, debugData: ByteBuffer(string: "bad"))
        try pair.interact()
        #expect(
            pair.clientHandler.receivedGoAway
                == HTTP2GoAway(lastStreamID: 1, errorCode: .protocolError, debugData: ByteBuffer(string: "bad"))
        )
        #expect(clientDelegate.log == ["goAwayReceived", "completed 3", "completed 2", "streamsFinished"])
        let unsent = try #require(clientDelegate.result(3))
        #expect(throws: HTTP2StreamError(.goAway(lastStreamID: 1, errorCode: .protocolError), streamID: 5)) { try unsent.get() }
        #expect(HTTP2StreamError(.goAway(lastStreamID: 1, errorCode: .protocolError), streamID: 5).isUnprocessed)
        #expect(throws: HTTP2StreamError(.connectionError(.protocolError), streamID: 3)) { try clientDelegate.result(2)?.get() }
        #expect(!pair.clientHandler.isAcceptingStreams && pair.clientHandler.availableStreams == 0)
        #expect(throws: HTTP2StreamError(.connectionUnavailable("GOAWAY received (last-stream-id 1)"), streamID: nil)) {
            try pair.submitTagged(9)
        }
        // Stream 1, at the last-stream-id, is still open; the connection ends under it.
        #expect(pair.clientHandler.isOpen(streamID: 1))
        try pair.client.close().wait()
        #expect(throws: HTTP2StreamError(.connectionError(.protocolError), streamID: 1)) { try clientDelegate.result(1)?.get() }
        #expect(clientDelegate.log.suffix(3) == ["completed 1", "streamsFinished", "closed"])
    }

    /// nghttp2 finds a protocol error in the server's bytes (DATA on stream 0) and queues a
    /// GOAWAY itself: from that moment the handler admits no stream (nghttp2 says so), the GOAWAY
    /// leaves at the end of the read, and the connection closes with the sent stream failed.
    @Test func aProtocolErrorFromTheServerEndsTheConnectionWithOurGoAway() throws {
        let serverDelegate = RecordingServerDelegate()
        serverDelegate.holdResponses = true
        let clientDelegate = RecordingClientDelegate()
        let pair = try InMemoryPair(delegate: serverDelegate, clientDelegate: clientDelegate)
        try pair.submitTagged(1)
        try pair.interact()
        #expect(pair.clientHandler.isAcceptingStreams)

        let dataOnStreamZero = ByteBuffer(bytes: [0, 0, 0, 0x0, 0x0, 0, 0, 0, 0])
        pair.client.pipeline.fireChannelRead(NIOAny(dataOnStreamZero))
        #expect(!pair.clientHandler.isAcceptingStreams)
        #expect(throws: HTTP2StreamError(.connectionUnavailable("GOAWAY sent"), streamID: nil)) { try pair.submitTagged(2) }
        pair.client.pipeline.fireChannelReadComplete()

        #expect(!pair.client.isActive)
        #expect(clientDelegate.log.suffix(4) == ["goAwaySent", "completed 1", "streamsFinished", "closed"])
        #expect(throws: HTTP2StreamError(.connectionClosed, streamID: 1)) { try clientDelegate.result(1)?.get() }
        while let bytes = try pair.client.readOutbound(as: ByteBuffer.self) { try pair.server.writeInbound(bytes) }
        #expect(serverDelegate.goAwaysReceived.map(\.errorCode) == [.protocolError])
    }

    // MARK: RST_STREAM

    /// The server resets one stream: it alone fails, as possibly processed, its slot is free at
    /// once, and the connection carries on.
    @Test(arguments: [HTTP2ErrorCode.internalError, .protocolError, .cancel])
    func aResetStreamFailsThatStreamOnly(code: HTTP2ErrorCode) throws {
        let serverDelegate = RecordingServerDelegate()
        serverDelegate.holdResponses = true
        let clientDelegate = RecordingClientDelegate()
        let pair = try InMemoryPair(delegate: serverDelegate, clientDelegate: clientDelegate)
        try pair.interact()
        let reset = try pair.submitTagged(1)
        let answered = try pair.submitTagged(2)
        try pair.interact()
        clientDelegate.log.removeAll()

        pair.serverHandler.resetStream(reset, errorCode: code)
        try pair.interact()
        #expect(clientDelegate.log == ["completed 1", "streamsFinished"])
        let error = HTTP2StreamError(.reset(code), streamID: reset)
        #expect(throws: error) { try clientDelegate.result(1)?.get() }
        #expect(!error.isUnprocessed)
        #expect(!pair.clientHandler.isOpen(streamID: reset) && pair.clientHandler.isOpen(streamID: answered))
        #expect(pair.clientHandler.availableStreams == 99 && pair.clientHandler.openStreams == 1)
        #expect(!pair.serverHandler.respond(to: reset, status: 200))

        pair.serverHandler.respond(to: answered, status: 200)
        let after = try pair.submitTagged(3)
        try pair.interact()
        pair.serverHandler.respond(to: after, status: 200)
        try pair.interact()
        #expect(try clientDelegate.result(2)?.get().status == 200)
        #expect(try clientDelegate.result(3)?.get().status == 200)
        #expect(pair.clientHandler.isAcceptingStreams && pair.clientHandler.availableStreams == 100)
    }

    // MARK: PING

    @Test func pingsInFlightEachGetTheirOwnAck() throws {
        let pair = try InMemoryPair(delegate: RecordingServerDelegate())
        try pair.interact()
        let pings = (0..<3).map { _ in pair.clientHandler.ping() }
        #expect(pings.allSatisfy { $0.completedResult() == nil })
        try pair.interact()
        for ping in pings { #expect(try ping.completedResult()?.get() != nil) }
    }

    /// After the channel closed (the handler still in the pipeline) a ping fails at once: no ACK
    /// can come, and its frame is never written.
    @Test func aPingOnAnEndedConnectionFailsAtOnce() throws {
        let pair = try InMemoryPair(delegate: RecordingServerDelegate())
        try pair.interact()
        pair.client.close(promise: nil)
        let ping = pair.clientHandler.ping()
        #expect(throws: HTTP2StreamError(.connectionClosed, streamID: nil)) { try ping.completedResult()?.get() }
        pair.client.embeddedEventLoop.run()
        #expect(try pair.client.readOutbound(as: ByteBuffer.self) == nil)
        let serverPing = pair.serverHandler.ping()
        pair.server.close(promise: nil)
        #expect(throws: HTTP2StreamError(.connectionClosed, streamID: nil)) { try serverPing.completedResult()?.get() }
    }

    // MARK: The server side of the shared output

    /// The server handler writes through the same `NGHTTP2Output`: a response queued before its
    /// channel closed is not written after.
    @Test func theServerWritesNothingAfterItsChannelClosed() throws {
        let serverDelegate = RecordingServerDelegate()
        serverDelegate.holdResponses = true
        let pair = try InMemoryPair(delegate: serverDelegate)
        let (streamID, answer) = pair.submit(request())
        try pair.interact()
        #expect(pair.serverHandler.respond(to: try #require(streamID), status: 200))
        pair.server.close(promise: nil)
        pair.server.embeddedEventLoop.run()
        #expect(try pair.server.readOutbound(as: ByteBuffer.self) == nil)
        #expect(answer.completedResult() == nil)
        #expect(!pair.serverHandler.respond(to: 1, status: 200))
    }
}
