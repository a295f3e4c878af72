import PushlineAPNSCore
import Testing

@testable import PushlineWorker

@Suite struct RetryQueueTests {
    @Test func aRecordRefusedByAFullQueueGoesAgainAfterTheNextDeliveryReport() {
        var queue = RetryQueue<String>()
        let now = MonotonicInstant.now
        queue.add("a", waiting: .room(deliveriesSeen: 7))
        queue.add("b", waiting: .room(deliveriesSeen: 7))
        #expect(queue.isWaitingForRoom)
        #expect(queue.nextBackoffEnd == nil)
        #expect(queue.takeReady(now: now, deliveries: 7).isEmpty, "no report since they were refused")
        #expect(queue.takeReady(now: now, deliveries: 8) == ["a", "b"], "oldest first")
        #expect(!queue.isWaitingForRoom)
        #expect(queue.count == 0)
    }

    @Test func aFailedDeliveryGoesAgainWhenItsBackoffIsOver() {
        var queue = RetryQueue<String>()
        let now = MonotonicInstant.now
        queue.add("late", waiting: .backoff(until: now + .seconds(2)))
        queue.add("soon", waiting: .backoff(until: now + .seconds(1)))
        #expect(queue.nextBackoffEnd == now + .seconds(1))
        #expect(queue.takeReady(now: now, deliveries: 0).isEmpty)
        #expect(queue.takeReady(now: now + .seconds(1), deliveries: 0) == ["soon"])
        #expect(queue.nextBackoffEnd == now + .seconds(2))
        #expect(queue.takeReady(now: now + .seconds(5), deliveries: 0) == ["late"])
        #expect(queue.nextBackoffEnd == nil)
    }

    @Test func removeAllEmptiesTheQueue() {
        var queue = RetryQueue<Int>()
        queue.add(1, waiting: .room(deliveriesSeen: 0))
        queue.add(2, waiting: .backoff(until: .now))
        #expect(queue.removeAll() == 2)
        #expect(queue.count == 0 && !queue.isWaitingForRoom)
    }
}
