import Testing

@testable import PushlineAPNS

@Suite struct LaneQueueTests {
    @Test func urgentRequestsLeaveBeforeBulkOnesAndEachLaneInOrder() {
        var queue = LaneQueue()
        queue.append(RequestID(1), lane: .bulk, hasDeadline: false)
        queue.append(RequestID(2), lane: .urgent, hasDeadline: false)
        queue.append(RequestID(3), lane: .bulk, hasDeadline: false)
        queue.prepend(RequestID(4), lane: .bulk, hasDeadline: false)
        #expect(queue.count(of: .urgent) == 1)
        #expect(Array(queue) == [2, 4, 1, 3].map(RequestID.init))
        var left: [RequestID] = []
        while !queue.isEmpty { left.append(queue.removeFirst()) }
        #expect(left == [2, 4, 1, 3].map(RequestID.init))
    }

    /// The count the deadline sweep relies on follows every change the queue makes.
    @Test func theQueueCountsItsRequestsWithADeadlineThroughEveryChange() {
        var queue = LaneQueue()
        queue.append(RequestID(1), lane: .bulk, hasDeadline: true)
        queue.append(RequestID(2), lane: .bulk, hasDeadline: false)
        queue.prepend(RequestID(3), lane: .urgent, hasDeadline: true)
        queue.append(RequestID(4), lane: .urgent, hasDeadline: false)
        #expect(queue.withDeadline == 2)
        let value1 = queue.removeFirst()
        #expect(value1 == RequestID(3))
        #expect(queue.withDeadline == 1)
        let value2 = queue.removeFirst()
        #expect(value2 == RequestID(4))
        #expect(queue.withDeadline == 1)
        queue.prepend(RequestID(5), lane: .bulk, hasDeadline: true)
        #expect(queue.withDeadline == 2)
        queue.retain { $0 != RequestID(1) }
        #expect(queue.withDeadline == 1)
        #expect(Array(queue) == [5, 2].map(RequestID.init))
        queue.removeAll()
        #expect(queue.withDeadline == 0)
        #expect(queue.isEmpty)
    }
}
