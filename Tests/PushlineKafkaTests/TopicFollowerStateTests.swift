import Testing

@testable import PushlineKafka

/// `TopicFollowerCore`'s state without a broker: when the follower is caught up, and how a stop
/// and the thread's end show in what its callers see.
@Suite struct TopicFollowerStateTests {
    @Test func caughtUpOnceEveryPartitionReachedItsEndOnce() {
        var state = TopicFollowerState.finding(stopping: false)
        #expect(!state.isCaughtUp && !state.waitIsOver)
        let early = state.ended(0)
        #expect(!early, "an end before the topic is read means nothing")
        state.found(partitions: 3)
        let ends = [state.ended(0), state.ended(0), state.ended(2)]
        #expect(ends == [false, false, false], "an end seen twice counts once")
        #expect(!state.isCaughtUp)
        let last = state.ended(1)
        #expect(last, "the last partition's end: the waiters are woken")
        #expect(state.isCaughtUp && state.waitIsOver)
        let again = state.ended(1)
        #expect(!again, "woken once")
        #expect(state == .caughtUp(stopping: false))
    }

    @Test func aStopRidesAlongAndTheEndKeepsWhetherItCaughtUp() {
        var state = TopicFollowerState.finding(stopping: false)
        state.found(partitions: 1)
        state.requestStop()
        #expect(state.isStopping)
        let last = state.ended(0)
        #expect(last, "an end served by the poll under way still counts")
        #expect(state == .caughtUp(stopping: true))
        state.finish()
        #expect(state == .finished(caughtUp: true))
        #expect(state.isCaughtUp && state.isFinished)
        state.requestStop()
        #expect(state == .finished(caughtUp: true), "a stop after the end changes nothing")
    }

    @Test func aFollowerThatEndsUnreadIsNeverCaughtUpAndNobodyWaitsForIt() {
        var stopped = TopicFollowerState.finding(stopping: false)
        stopped.requestStop()
        #expect(stopped == .finding(stopping: true))
        #expect(stopped.waitIsOver, "nobody waits for a follower asked to stop")
        stopped.found(partitions: 2)
        #expect(stopped == .reading(ended: [], partitions: 2, stopping: true))
        stopped.finish()
        #expect(stopped == .finished(caughtUp: false))
        #expect(stopped.waitIsOver && !stopped.isCaughtUp)
        // The topic could not be assigned: the thread ends without a stop.
        var failed = TopicFollowerState.finding(stopping: false)
        failed.finish()
        #expect(failed.isFinished && failed.isStopping && !failed.isCaughtUp)
    }

    @Test func aTopicWithNoPartitionsIsNeverCaughtUp() {
        var state = TopicFollowerState.finding(stopping: false)
        state.found(partitions: 0)
        let ended = state.ended(0)
        #expect(!ended)
        #expect(!state.isCaughtUp)
    }

    /// A topic the follower may not create and that does not exist holds nobody up: there is
    /// nothing in it. Once it appears it is read from the beginning, and until then the follower
    /// counts as caught up (a stop rides along as elsewhere).
    @Test func anAbsentTopicThatCannotBeCreatedHoldsNobodyUpAndIsReadOnceItAppears() {
        var state = TopicFollowerState.finding(stopping: false)
        state.absent()
        #expect(state == .absent(stopping: false))
        #expect(state.isCaughtUp && state.waitIsOver && !state.isFinished)
        state.found(partitions: 2)
        #expect(state == .reading(ended: [], partitions: 2, stopping: false), "read from its beginning")
        let first = state.ended(0)
        let second = state.ended(1)
        #expect(!first && second && state.isCaughtUp)
        var stopped = TopicFollowerState.finding(stopping: false)
        stopped.absent()
        stopped.requestStop()
        #expect(stopped == .absent(stopping: true) && stopped.isStopping)
        stopped.finish()
        #expect(stopped == .finished(caughtUp: true))
        var reading = TopicFollowerState.finding(stopping: false)
        reading.found(partitions: 1)
        reading.absent()
        #expect(reading == .reading(ended: [], partitions: 1, stopping: false), "absent only while finding")
    }
}
