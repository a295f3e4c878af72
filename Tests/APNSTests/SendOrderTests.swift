import APNSCore
import Testing

@testable import APNS

/// The deadline sweep's bookkeeping, as a value: no connection, no clock of its own.
@Suite struct SendOrderTests {
    func request(_ token: String) -> PendingRequest {
        PendingRequest(
            notification: APNSNotification(deviceToken: token, topic: "t", apnsID: "a", payload: []),
            options: APNSSendOptions(), index: 0, completion: { _, _ in })
    }

    /// Marks `request` as sent on `streamID` and records it, like the connection does.
    func send(_ request: PendingRequest, on streamID: Int32, deadline: ContinuousClock.Instant, into order: inout SendOrder) {
        request.sends += 1
        request.streamID = streamID
        order.append(request, streamID: streamID, deadline: deadline)
    }

    @Test func expiresOnlyOpenStreamsPastTheirDeadlineInSendOrder() {
        let start = ContinuousClock.now
        var order = SendOrder()
        let requests = (0..<5).map { request("0\($0)") }
        for (offset, request) in requests.enumerated() {
            send(request, on: Int32(2 * offset + 1), deadline: start + .seconds(offset + 1), into: &order)
        }
        requests[1].streamID = nil  // answered

        #expect(order.expired(now: start).isEmpty)
        let expired = order.expired(now: start + .milliseconds(3500))
        #expect(expired.map(\.streamID) == [1, 5])
        #expect(expired.map { $0.request === requests[0] } == [true, false])
        // What expired or ended is gone; the rest is still watched.
        #expect(order.count == 2)
        #expect(order.expired(now: start + .seconds(10)).map(\.streamID) == [7, 9])
        #expect(order.count == 0)
    }

    @Test func aRequestSentAgainIsWatchedOnlyOnItsNewStream() {
        let start = ContinuousClock.now
        var order = SendOrder()
        let resent = request("aa")
        send(resent, on: 1, deadline: start + .seconds(1), into: &order)
        // Refused, then sent again (here on the same connection) with a later deadline.
        send(resent, on: 3, deadline: start + .seconds(5), into: &order)
        #expect(order.expired(now: start + .seconds(2)).isEmpty)
        #expect(order.count == 1)
        #expect(order.expired(now: start + .seconds(5)).map(\.streamID) == [3])
    }
}
