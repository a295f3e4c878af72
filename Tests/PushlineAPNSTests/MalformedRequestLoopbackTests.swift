import PushlineAPNS
import PushlineAPNSCore
import PushlineAPNSMock
import PushlineTestSupport
import Synchronization
import Testing

/// A request a server refuses as malformed, through the real client and the mock over TLS on
/// loopback: it ends once, with `protocol_error`, and takes at most two connections down, however
/// many other requests share them (docs/apns.md, "Requests a server refuses as malformed").
@Suite struct MalformedRequestLoopbackTests {
    let client = APNSClientTests()

    /// Sends `notifications`, waits for every outcome, then shuts the client down.
    func send(_ notifications: [APNSNotification], with apns: APNSClient) async throws -> [Int: [APNSOutcome]] {
        let outcomes = Mutex<[Int: [APNSOutcome]]>([:])
        let done = Atomic<Int>(0)
        apns.send(notifications) { index, outcome in
            outcomes.withLock { $0[index, default: []].append(outcome) }
            done.wrappingAdd(1, ordering: .relaxed)
        }
        try await waitUntil("\(notifications.count) outcomes", timeout: .seconds(60)) {
            done.load(ordering: .relaxed) >= notifications.count
        }
        await apns.shutdown()
        return outcomes.withLock { $0 }
    }

    /// A collapse id that ends with a space (RFC 9113, section 8.2.1 forbids it): the mock's
    /// nghttp2 resets that stream with PROTOCOL_ERROR; the request is not resent.
    @Test func aStreamResetAsMalformedEndsItsRequestOnceAndKeepsTheConnections() async throws {
        let fixture = try await MockFixture.start()
        let apns = try client.tokenClient(fixture, connections: 2)
        apns.start()
        var notifications = (0..<300).map { APNSClientTests.notification($0) }
        notifications[7].collapseID = "c1 "
        let outcomes = try await send(notifications, with: apns)
        #expect(outcomes[7]?.map(\.noResponse) == [.protocolError])
        #expect(outcomes[7]?.first?.attempts == 1)
        #expect(outcomes.filter { $0.key != 7 }.allSatisfy { $0.value.map(\.status) == [200] })
        #expect(outcomes.count == 300)
        #expect(fixture.stats.connections == 2, "no connection lost: \(fixture.stats.connections) opened")
        try await fixture.stop()
    }

    /// A server that ends the whole connection instead (GOAWAY PROTOCOL_ERROR, every other stream
    /// unanswered): the one request is found within two connections; the hundreds in flight
    /// beside it are answered once each.
    @Test func aConnectionEndedForOneRequestFindsItAndLosesNoOther() async throws {
        let bad = 777
        let fixture = try await MockFixture.start { configuration in
            configuration.protocolErrorTokens = [APNSClientTests.token(bad)]
            configuration.latencyMilliseconds = 5
            configuration.maxStreams = 200
        }
        let apns = try client.tokenClient(fixture, connections: 2)
        apns.start()
        let outcomes = try await send((0..<3000).map { APNSClientTests.notification($0) }, with: apns)
        #expect(outcomes.count == 3000)
        #expect(outcomes[bad]?.map(\.noResponse) == [.protocolError])
        let others = outcomes.filter { $0.key != bad }
        let wrong = others.filter { $0.value.map(\.status) != [200] }
        #expect(wrong.isEmpty, "\(wrong.count) others not answered 200 exactly once: \(wrong.prefix(3))")
        let stats = fixture.stats
        #expect(stats.protocolErrorGoaways == 2, "the first end makes suspects, the second names it")
        #expect(stats.connections <= 4, "\(stats.connections) connections opened")
        try await fixture.stop()
    }
}
