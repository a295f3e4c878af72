import Testing

@testable import PushlineHTTP2
@testable import PushlineHTTP2Server

@Suite struct StateValueTests {
    @Test func availableStreamsFollowPeerLimitAndInFlight() {
        var capacity = ClientStreamCapacity(assumedPeerMaxConcurrentStreams: 1)
        #expect(capacity.availableStreams == 1)
        let rejection = capacity.submit()
        #expect(rejection == nil)
        #expect(capacity.availableStreams == 0)
        let changed = capacity.peerSettings(maxConcurrentStreams: 100)
        let changedAgain = capacity.peerSettings(maxConcurrentStreams: 100)
        #expect(changed && !changedAgain)
        #expect(capacity.availableStreams == 99)
        capacity.headersSent()
        #expect(capacity.open == 1)
        capacity.streamFinished(wasSent: true)
        #expect(capacity.open == 0 && capacity.inFlight == 0 && capacity.availableStreams == 100)
    }

    @Test func goAwayAndCloseRejectSubmits() {
        var capacity = ClientStreamCapacity(assumedPeerMaxConcurrentStreams: 10)
        capacity.goAwayReceived(lastStreamID: 7)
        #expect(capacity.availableStreams == 0)
        let afterGoAway = capacity.submit()
        #expect(afterGoAway == "GOAWAY received (last-stream-id 7)")
        capacity.closed()
        let afterClose = capacity.submit()
        #expect(afterClose == "connection closed")
    }

    @Test func coalescerSchedulesOneDrainPerTick() {
        var coalescer = WriteCoalescer()
        let first = coalescer.needsDrain()
        let second = coalescer.needsDrain()
        #expect(first == .scheduleDrain && second == .none)
        coalescer.scheduledDrainRuns()
        coalescer.readStarted()
        let duringRead = coalescer.needsDrain()
        #expect(duringRead == .none)
        coalescer.readCompleted()
        let afterRead = coalescer.needsDrain()
        #expect(afterRead == .scheduleDrain)
    }

    @Test func serverStatsCountViolationsOnlyAtTheAcknowledgedLimit() {
        var stats = ServerStreamStats()
        stats.streamOpened()
        stats.streamRejected(acknowledgedLimit: 2)
        #expect(stats.limitViolations == 0)
        stats.streamOpened()
        stats.streamRejected(acknowledgedLimit: 2)
        #expect(stats.limitViolations == 1)
        #expect(stats.maxOpenStreams == 2)
    }
}
