import Testing

@testable import PushlineKafka

/// `ProducerCore`'s state without a broker: flushes, the stop and the waits for room, with plain
/// values for the tasks that wait.
@Suite struct ProducerStateTests {
    typealias State = ProducerState<String, String>

    @Test func flushesGoToThePollThreadsNextTurnInOrder() {
        var state = State()
        let queued = [state.flush(timeout: .seconds(1), waiter: "a"), state.flush(timeout: .seconds(2), waiter: "b")]
        #expect(queued == [true, true])
        let turn = state.nextTurn()
        #expect(turn.flushes.map(\.waiter) == ["a", "b"])
        #expect(turn.flushes.map(\.timeout) == [.seconds(1), .seconds(2)])
        #expect(!turn.stop)
        let next = state.nextTurn()
        #expect(next.flushes.isEmpty, "each flush is performed once")
    }

    @Test func aStopEndsThePollLoopAndItsEndAnswersEveryone() {
        var state = State()
        let waits = state.stop(waiter: "closer")
        #expect(waits)
        _ = state.flush(timeout: .seconds(1), waiter: "late flush")
        let roomWaits = state.waitForRoom(waiter: "sender", outstanding: 3)
        #expect(roomWaits)
        let turn = state.nextTurn()
        #expect(turn.stop)
        #expect(turn.flushes.map(\.waiter) == ["late flush"], "flushes asked before the stop are performed")
        _ = state.flush(timeout: .seconds(1), waiter: "after the last turn")
        let secondCloser = state.stop(waiter: "second closer")
        #expect(secondCloser)
        let ended = state.ended()
        #expect(ended.flushes.map(\.waiter) == ["after the last turn"], "never performed: they fail")
        #expect(ended.stopWaiters == ["closer", "second closer"])
        #expect(ended.roomWaiters == ["sender"])
        #expect(state.isStopped)
    }

    @Test func afterTheEndEveryEventAnswersAtOnce() {
        var state = State()
        state.requestStop()
        let turn = state.nextTurn()
        #expect(turn.stop, "a stop nobody waits for (deinit)")
        let ended = state.ended()
        #expect(ended.stopWaiters.isEmpty)
        let flushQueued = state.flush(timeout: .seconds(1), waiter: "flush")
        let stopWaits = state.stop(waiter: "closer")
        let roomWaits = state.waitForRoom(waiter: "sender", outstanding: 5)
        #expect(!flushQueued && !stopWaits && !roomWaits)
    }

    @Test func aWaitForRoomLastsUntilThePollThreadServesReports() {
        var state = State()
        let emptyQueueWaits = state.waitForRoom(waiter: "first", outstanding: 0)
        #expect(!emptyQueueWaits, "an empty queue has room")
        _ = state.waitForRoom(waiter: "second", outstanding: 10)
        _ = state.waitForRoom(waiter: "third", outstanding: 10)
        let served = state.served()
        let servedAgain = state.served()
        #expect(served == ["second", "third"])
        #expect(servedAgain.isEmpty, "resumed once")
        let ended = state.ended()
        #expect(ended.roomWaiters.isEmpty)
    }
}
