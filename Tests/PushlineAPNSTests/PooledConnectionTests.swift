import NIOCore
import PushlineAPNSCore
import PushlineHTTP2
import PushlineHTTP2Server
import Testing

@testable import PushlineAPNS

/// A pooled connection's behaviour without sockets, TLS or a mock (`EmbeddedConnection`): what
/// it sends, what it reports to its pool as values, and how it carries out what the pool returns.
@Suite struct PooledConnectionTests {
    @Test func reportsConnectedThenTheServersStreamLimit() throws {
        let harness = EmbeddedConnection()
        try harness.connect()
        #expect(harness.pool.log == ["connected(nil)", "peerLimitChanged(100)"])
        #expect(harness.setup.attempts == 1)
    }

    @Test func sendsDeliveredRequestsAndReportsTheirAnswersAsValues() throws {
        let harness = EmbeddedConnection()
        try harness.connect()
        harness.connection.deliver(EmbeddedConnection.requests([7, 8]))
        try harness.interact()
        let requests = harness.server.requests
        #expect(requests.map(\.path) == ["/3/device/aa7", "/3/device/aa8"])
        #expect(requests.map(\.authority) == ["api.push.apple.com", "api.push.apple.com"])
        #expect(requests.map { $0.headers.first { $0.name == "apns-id" }?.value } == ["id-7", "id-8"])
        #expect(requests.map { $0.body.map { String(buffer: $0) } } == ["{\"n\":7}", "{\"n\":8}"])
        #expect(harness.pool.log == ["connected(nil)", "peerLimitChanged(100)", "ended(7:200,8:200)"])
        #expect(harness.pool.nestedReports == 0)
    }

    /// What the pool decides for the connection that reported comes back as the report's result,
    /// and is carried out after it: requests returned start at once, their answers are reported
    /// in turn, and no report arrives while another is with the pool.
    @Test func carriesOutTheActionsItsReportsReturn() throws {
        let harness = EmbeddedConnection()
        var next = [[1], [2, 3], [4]]
        harness.pool.decide = { event in
            switch event {
            case .connected, .streamsEnded:
                guard !next.isEmpty else { return ConnectionActions() }
                return ConnectionActions(sends: EmbeddedConnection.requests(next.removeFirst()))
            default:
                return ConnectionActions()
            }
        }
        try harness.connect()
        #expect(harness.server.requests.map(\.path) == ["/3/device/aa1", "/3/device/aa2", "/3/device/aa3", "/3/device/aa4"])
        #expect(harness.pool.log == ["connected(nil)", "peerLimitChanged(100)", "ended(1:200)", "ended(2:200,3:200)", "ended(4:200)"])
        #expect(harness.pool.nestedReports == 0)
    }

    @Test func requestsForAConnectionThatIsNotUpAreGivenBack() throws {
        let harness = EmbeddedConnection()
        harness.connection.deliver(EmbeddedConnection.requests([5, 6]))
        try harness.interact()
        #expect(harness.pool.log == ["notStarted([5, 6], unusable: true)"])
    }

    /// GOAWAY is reported, then the streams above its last stream id end unprocessed (a free
    /// resend); the connection takes no new streams.
    @Test func aGoAwayEndsTheStreamsAboveItsLastStreamUnprocessed() throws {
        let harness = EmbeddedConnection()
        try harness.connect()
        harness.server.hold = true
        harness.connection.deliver(EmbeddedConnection.requests([1, 2]))
        try harness.interact()
        #expect(harness.server.requests.map(\.streamID) == [1, 3])
        let server = try #require(try harness.serverChannel?.pipeline.syncOperations.handler(type: HTTP2ServerHandler.self))
        server.sendGoAway(lastStreamID: 1)
        try harness.interact()
        #expect(harness.pool.log == ["connected(nil)", "peerLimitChanged(100)", "goAway", "ended(2:unprocessed)"])
        harness.connection.deliver(EmbeddedConnection.requests([9]))
        try harness.interact()
        #expect(harness.pool.log.last == "notStarted([9], unusable: true)")
    }

    @Test func aResetStreamIsReportedByItsErrorCode() throws {
        let harness = EmbeddedConnection()
        try harness.connect()
        harness.server.hold = true
        harness.connection.deliver(EmbeddedConnection.requests([1, 2, 3]))
        try harness.interact()
        let server = try #require(try harness.serverChannel?.pipeline.syncOperations.handler(type: HTTP2ServerHandler.self))
        server.resetStream(1, errorCode: .protocolError)
        server.refuseStream(3)
        server.resetStream(5, errorCode: .internalError)
        try harness.interact()
        #expect(harness.pool.log.dropFirst(2).joined() == "ended(1:malformed,2:unprocessed,3:lost)")
    }

    /// The deadline sweep (every 50 ms) resets the streams past their deadline: RST_STREAM
    /// CANCEL to the server, `timedOut` to the pool.
    @Test func theDeadlineSweepResetsStreamsPastTheirDeadline() throws {
        let harness = EmbeddedConnection(requestTimeout: .zero)
        try harness.connect()
        harness.server.hold = true
        harness.connection.deliver(EmbeddedConnection.requests([4]))
        try harness.interact()
        #expect(harness.pool.log == ["connected(nil)", "peerLimitChanged(100)"])
        harness.loop.advanceTime(by: ConnectionTimers.sweepInterval)
        try harness.interact()
        #expect(harness.pool.log == ["connected(nil)", "peerLimitChanged(100)", "ended(4:timedOut)"])
        #expect(harness.server.resets == [1])
    }

    /// The pool decides the reconnect: `closed` is reported, the backoff it returns runs on the
    /// connection's timer, `backoffElapsed` is reported, and the `connect` it returns opens a new
    /// channel. A failed attempt is reported too.
    @Test func reconnectsWhenThePoolSaysSo() throws {
        let harness = EmbeddedConnection()
        harness.pool.decide = { event in
            switch event {
            case .closed, .connectFailed: ConnectionActions(lifecycle: [.scheduleReconnect(after: .seconds(2))])
            case .backoffElapsed: ConnectionActions(lifecycle: [.connect])
            default: ConnectionActions()
            }
        }
        try harness.connect()
        try harness.serverChannel?.close().wait()
        try harness.setup.channels.last?.close().wait()
        try harness.interact()
        #expect(harness.pool.log == ["connected(nil)", "peerLimitChanged(100)", "closed"])
        harness.setup.failNext = true
        harness.loop.advanceTime(by: .seconds(1))
        #expect(harness.setup.attempts == 1, "not before the backoff the pool decided")
        harness.loop.advanceTime(by: .seconds(1))
        #expect(harness.pool.log == ["connected(nil)", "peerLimitChanged(100)", "closed", "backoffElapsed", "connectFailed"])
        harness.loop.advanceTime(by: .seconds(2))
        #expect(harness.setup.attempts == 3)
        #expect(harness.setup.channels.count == 2)
        #expect(harness.pool.nestedReports == 0)
    }

    /// The polite close the pool decides: GOAWAY(NO_ERROR) to the server, the open stream is
    /// answered, then the channel closes and `closed` is reported.
    @Test func aPoliteCloseWaitsForTheOpenStreams() throws {
        let harness = EmbeddedConnection()
        try harness.connect()
        harness.server.hold = true
        harness.connection.deliver(EmbeddedConnection.requests([1]))
        try harness.interact()
        harness.connection.perform(.close)
        try harness.interact()
        #expect(harness.server.goAways.map(\.errorCode) == [.noError])
        #expect(harness.setup.channels.last?.isActive == true, "open streams are waited for")
        let server = try #require(try harness.serverChannel?.pipeline.syncOperations.handler(type: HTTP2ServerHandler.self))
        #expect(server.respond(to: 1, status: 200, headers: [HTTP2Header("apns-id", "id-1")]))
        try harness.interact()
        #expect(harness.pool.log == ["connected(nil)", "peerLimitChanged(100)", "ended(1:200)", "closed"])
    }
}
