import Testing

@testable import PushlineAPNS

@Suite struct PoolConnectionsTests {
    static func connections(_ count: Int = 3, limits: [Int]) -> PoolConnections {
        var connections = PoolConnections(count: count, configuredCap: 1000, tokenAuth: false)
        for (slot, limit) in limits.enumerated() {
            let value1 = connections.connected(slot, peerLimit: limit)
            #expect(value1 == .none)
        }
        return connections
    }

    @Test func theNextRequestGoesWhereMostStreamsAreFree() {
        var connections = Self.connections(limits: [2, 5, 3])
        #expect(connections.slotForNext(avoiding: nil) == 1)
        for _ in 0..<3 {
            let reserved = connections.reserve(1)
            #expect(reserved)
        }
        #expect(connections.slotForNext(avoiding: nil) == 2)
        #expect(connections.available(1) == 2)
    }

    /// A request answered 503 on a connection goes elsewhere when another has room, and back
    /// there when none has.
    @Test func aRequestAvoidsTheConnectionThatAnswered503WhenAnotherHasRoom() {
        var connections = Self.connections(2, limits: [5, 1])
        #expect(connections.slotForNext(avoiding: 0) == 1)
        let value2 = connections.reserve(1)
        #expect(value2)
        #expect(connections.slotForNext(avoiding: 0) == 0)
    }

    @Test func connectionsThatDoNotAcceptRequestsAreNotChosen() {
        var connections = Self.connections(2, limits: [5, 1])
        let value3 = connections.reserve(0)
        #expect(value3)
        let value4 = connections.stopUsing(0)
        #expect(value4 == .none, "one stream still open: it drains")
        #expect(connections.slotForNext(avoiding: nil) == 1)
        #expect(!connections.hasRoom(0))
        connections.release(0)
        let value5 = connections.streamClosed(0)
        #expect(value5 == .close, "its last stream closed")
        let value6 = connections.stopUsing(1)
        #expect(value6 == .close, "nothing open: it closes at once")
        #expect(connections.slotForNext(avoiding: nil) == nil)
    }

    /// A token-auth connection carries one stream until a request succeeds, and again after a
    /// reconnect.
    @Test func aTokenConnectionProbesWithOneStreamAfterEachConnect() {
        var connections = PoolConnections(count: 1, configuredCap: 1000, tokenAuth: true)
        _ = connections.connected(0, peerLimit: 500)
        #expect(connections.available(0) == 1)
        connections.succeeded(0)
        #expect(connections.available(0) == 500)
        let value7 = connections.closed(0, random: 0)
        #expect(value7 != .none)
        let value8 = connections.backoffElapsed(0)
        #expect(value8 == .connect)
        _ = connections.connected(0, peerLimit: 500)
        #expect(connections.available(0) == 1)
        let value9 = connections.shutDown(0)
        #expect(value9 == .close)
    }
}
