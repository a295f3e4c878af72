import PushlineAPNS
import PushlineAPNSCore
import PushlineTLS
import PushlineTestSupport
import Synchronization
import Testing

/// `APNSClient.cancel(where:)` on a real pool: queued work the filter picks ends at once as
/// `cancelled`, told to its observer; the rest waits on.
@Suite struct APNSClientCancelTests {
    final class Heard: APNSBatchObserver {
        let campaign: String
        let outcomes = Mutex<[Int: APNSOutcome]>([:])
        init(_ campaign: String) { self.campaign = campaign }
        func notificationEnded(_ index: Int, outcome: APNSOutcome) { outcomes.withLock { $0[index] = outcome } }
        func cancelKey(_ index: Int) -> APNSCancelKey? { APNSCancelKey(campaign: campaign, job: "\(campaign)-\(index)") }
    }

    @Test func queuedWorkThatACancelPicksEndsCancelledAtOnce() async throws {
        let reserved = try ReservedPort()
        let client = try APNSClient(
            configuration: APNSClientConfiguration(endpoint: APNSEndpoint(host: "127.0.0.1", port: reserved.port), connections: 1),
            credential: .token(keyID: "K", teamID: "T", key: try PrivateKey.generateP256())
        )
        // Not started: no connection, so everything waits in the queue.
        let (campaign, other) = (Heard("spring"), Heard("other"))
        let notifications = (0..<3).map { APNSClientTests.notification($0) }
        client.send(notifications, observer: campaign)
        client.send(notifications, options: APNSSendOptions(lane: .urgent), observer: other)
        #expect(client.status().queued == 6)

        let ended = client.cancel { key in key.campaign == "spring" && key.job != "spring-1" }
        #expect(ended == 2)
        #expect(campaign.outcomes.withLock { $0 }.keys.sorted() == [0, 2])
        #expect(campaign.outcomes.withLock { $0 }.values.allSatisfy { $0.noResponse == .cancelled && $0.attempts == 0 })
        #expect(other.outcomes.withLock { $0 }.isEmpty)
        #expect(client.status().queued == 4)

        await client.shutdown()
        #expect(campaign.outcomes.withLock { $0[1]?.noResponse } == .shutdown)
        #expect(other.outcomes.withLock { $0.count } == 3)
        withExtendedLifetime(reserved) {}
    }
}
