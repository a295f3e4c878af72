import PushlineAPNSCore
import Testing

@testable import PushlineAPNS

/// The deadline sweep's bookkeeping, as a value: no connection, no clock of its own, and no
/// request fields read (the connection's handler says which streams are open).
@Suite struct SendOrderTests {
    @Test func expiresOnlyOpenStreamsPastTheirDeadlineInSendOrder() {
        let start = MonotonicInstant.now
        var order = SendOrder()
        var open: Set<Int32> = []
        for offset in 0..<5 {
            let streamID = Int32(2 * offset + 1)
            order.append(streamID: streamID, deadline: start + .seconds(offset + 1))
            open.insert(streamID)
        }
        open.remove(3)  // answered

        #expect(order.expired(now: start, isOpen: open.contains).isEmpty)
        #expect(order.expired(now: start + .milliseconds(3500), isOpen: open.contains) == [1, 5])
        // What expired or ended is gone; the rest is still watched.
        #expect(order.count == 2)
        #expect(order.expired(now: start + .seconds(10), isOpen: open.contains) == [7, 9])
        #expect(order.count == 0)
    }

    @Test func endedStreamsAtTheFrontAreDroppedWithoutWaitingForTheirDeadline() {
        let start = MonotonicInstant.now
        var order = SendOrder()
        for streamID in stride(from: Int32(1), through: 99, by: 2) {
            order.append(streamID: streamID, deadline: start + .seconds(10))
        }
        // All answered but the last: the sweep forgets them, and keeps the open one.
        #expect(order.expired(now: start + .seconds(1), isOpen: { $0 == 99 }).isEmpty)
        #expect(order.count == 1)
    }
}
