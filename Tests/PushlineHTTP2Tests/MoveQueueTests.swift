import Testing

@testable import PushlineHTTP2

/// The deferred-completion queue without a connection: order, appends while draining (into the
/// same queue, with the storage moved under the drain), and that every element is released once.
@Suite struct MoveQueueTests {
    final class Tracked {
        let value: Int
        let released: Counter

        init(_ value: Int, _ released: Counter) {
            self.value = value
            self.released = released
        }

        deinit { released.count += 1 }
    }

    final class Counter { var count = 0 }

    @Test func elementsComeOutInTheOrderTheyWentIn() {
        let queue = MoveQueue<Int>(capacity: 2)
        for value in 0..<100 { queue.append(value) }
        var seen: [Int] = []
        queue.drain { seen.append($0) }
        #expect(seen == Array(0..<100))
        #expect(queue.isEmpty)
    }

    @Test func whatADrainAppendsWaitsForTheNextDrain() {
        let queue = MoveQueue<Int>(capacity: 4)
        for value in 0..<3 { queue.append(value) }
        var seen: [Int] = []
        // Each element adds two more: the storage grows and moves while the drain runs.
        queue.drain { value in
            seen.append(value)
            queue.append(100 + 2 * value)
            queue.append(101 + 2 * value)
        }
        #expect(seen == [0, 1, 2])
        #expect(queue.count == 6)
        var next: [Int] = []
        queue.drain { next.append($0) }
        #expect(next == [100, 101, 102, 103, 104, 105])
    }

    @Test func storageFreedByDrainsIsReused() {
        let queue = MoveQueue<Int>(capacity: 8)
        for round in 0..<50 {
            for value in 0..<6 { queue.append(round * 10 + value) }
            var seen: [Int] = []
            var first = true
            queue.drain { value in
                seen.append(value)
                // Appends after part of the queue was moved out: room is made at the front.
                if first {
                    first = false
                    for extra in 0..<4 { queue.append(1000 + extra) }
                }
            }
            #expect(seen == (0..<6).map { round * 10 + $0 })
            var rest: [Int] = []
            queue.drain { rest.append($0) }
            #expect(rest == [1000, 1001, 1002, 1003])
        }
    }

    @Test func everyElementIsReleasedOnceDrainedOrLeftBehind() {
        let released = Counter()
        do {
            let queue = MoveQueue<Tracked>(capacity: 2)
            for value in 0..<10 { queue.append(Tracked(value, released)) }
            var drained = 0
            queue.drain { element in
                drained += element.value >= 0 ? 1 : 0
                if element.value < 3 { queue.append(Tracked(100 + element.value, released)) }
            }
            #expect(drained == 10)
            #expect(released.count == 10)
            #expect(queue.count == 3)
        }
        // The queue is gone with three elements in it: they are released too.
        #expect(released.count == 13)
    }
}
