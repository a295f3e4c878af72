import Testing

@testable import PushlineAPNS

@Suite struct StreamCapacityTests {
    @Test func tokenConnectionsProbeWithOneStream() {
        var capacity = StreamCapacity(configuredCap: 1000, tokenAuth: true, peerLimit: 1)
        capacity.peerLimitChanged(500)
        #expect(capacity.limit == 1)
        let result1 = capacity.reserve()
        #expect(result1)
        let result2 = capacity.reserve()
        #expect(!result2)
        capacity.succeeded()
        #expect(capacity.limit == 500)
        #expect(capacity.available == 499)
    }

    @Test func limitIsTheSmallestOfPeerCapAndNeverExceeded() {
        var capacity = StreamCapacity(configuredCap: 7, tokenAuth: false, peerLimit: 1000)
        var taken = 0
        while capacity.reserve() { taken += 1 }
        #expect(taken == 7)
        capacity.peerLimitChanged(3)
        #expect(capacity.available == 0)
        for _ in 0..<4 { capacity.release() }
        #expect(capacity.available == 0)
        capacity.release()
        #expect(capacity.available == 1)
        capacity.peerLimitChanged(0)
        let result3 = capacity.reserve()
        #expect(!result3)
    }

    @Test func lifecycleDrainsThenReconnectsWithBackoff() {
        var lifecycle = ConnectionLifecycle(backoff: ReconnectBackoff(base: .milliseconds(100), cap: .seconds(1)))
        let result4 = lifecycle.connected()
        #expect(result4 == .none)
        #expect(lifecycle.acceptsRequests)
        let result5 = lifecycle.stopUsing(openStreams: 3)
        #expect(result5 == .none)
        #expect(!lifecycle.acceptsRequests)
        let result6 = lifecycle.streamClosed(openStreams: 1)
        #expect(result6 == .none)
        let result7 = lifecycle.streamClosed(openStreams: 0)
        #expect(result7 == .close)
        let result8 = lifecycle.closed(random: 1)
        #expect(result8 == .scheduleReconnect(after: .milliseconds(100)))
        let result9 = lifecycle.backoffElapsed()
        #expect(result9 == .connect)
        let result10 = lifecycle.connectFailed(random: 1)
        #expect(result10 == .scheduleReconnect(after: .milliseconds(200)))
        let result11 = lifecycle.backoffElapsed()
        #expect(result11 == .connect)
        let result12 = lifecycle.connectFailed(random: 1)
        #expect(result12 == .scheduleReconnect(after: .milliseconds(400)))
        let result13 = lifecycle.backoffElapsed()
        #expect(result13 == .connect)
        for _ in 0..<5 {
            _ = lifecycle.connectFailed(random: 1)
            _ = lifecycle.backoffElapsed()
        }
        let result14 = lifecycle.connectFailed(random: 1)
        #expect(result14 == .scheduleReconnect(after: .seconds(1)))
        _ = lifecycle.backoffElapsed()
        let result15 = lifecycle.connected()
        #expect(result15 == .none)
        let result16 = lifecycle.closed(random: 0)
        #expect(result16 == .scheduleReconnect(after: .milliseconds(50)))
        let result17 = lifecycle.shutDown()
        #expect(result17 == .none)
        let result18 = lifecycle.backoffElapsed()
        #expect(result18 == .none)
    }

    @Test func idleConnectionClosesAtOnceOnGoaway() {
        var lifecycle = ConnectionLifecycle()
        _ = lifecycle.connected()
        let result19 = lifecycle.stopUsing(openStreams: 0)
        #expect(result19 == .close)
    }

    /// An unanswered PING: the connection is abandoned at once (GOAWAY, then TCP), not drained;
    /// after that, nothing more (a drained or closed connection does not abandon again).
    @Test func aLostPingAbandonsTheConnection() {
        var lifecycle = ConnectionLifecycle()
        _ = lifecycle.connected()
        #expect(lifecycle.pingLost() == .abandon)
        #expect(lifecycle.state == .draining)
        #expect(lifecycle.pingLost() == .none)
        #expect(lifecycle.streamClosed(openStreams: 0) == .close)
    }

    /// A token-auth connection is probing until a request succeeds, and again after a reconnect;
    /// a certificate connection never probes.
    @Test func theProbingPhaseEndsWithASuccessAndComesBackWithAReconnect() {
        var capacity = StreamCapacity(configuredCap: 100, tokenAuth: true, peerLimit: 50)
        #expect(capacity.phase == .probing)
        capacity.succeeded()
        #expect(capacity.phase == .proven && capacity.limit == 50)
        capacity.reconnected(tokenAuth: true)
        #expect(capacity.phase == .probing && capacity.limit == 1)
        capacity.reconnected(tokenAuth: false)
        #expect(capacity.phase == .proven)
        #expect(StreamCapacity(configuredCap: 100, tokenAuth: false).phase == .proven)
    }
}
