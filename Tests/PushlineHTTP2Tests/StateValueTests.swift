import Testing

@testable import PushlineHTTP2
@testable import PushlineHTTP2Server

@Suite struct StateValueTests {
    /// The rule only; `ClientConnectionTests.availableStreamsFollowThePeersLimitAndTheStreamsInFlight`
    /// checks it on a handler whose peer limit is nghttp2's and whose streams are its table's.
    @Test func availableStreamsFollowPeerLimitAndInFlight() {
        #expect(ClientStreamCapacity.availableStreams(peerLimit: 1, inFlight: 0, refusal: nil) == 1)
        #expect(ClientStreamCapacity.availableStreams(peerLimit: 1, inFlight: 1, refusal: nil) == 0)
        #expect(ClientStreamCapacity.availableStreams(peerLimit: 100, inFlight: 1, refusal: nil) == 99)
        #expect(ClientStreamCapacity.availableStreams(peerLimit: 100, inFlight: 0, refusal: nil) == 100)
        // A lowered limit below the streams in flight admits none (not a negative count).
        #expect(ClientStreamCapacity.availableStreams(peerLimit: 1, inFlight: 3, refusal: nil) == 0)
        #expect(ClientStreamCapacity.availableStreams(peerLimit: 100, inFlight: 0, refusal: .goAwaySent) == 0)
    }

    @Test func theDelegateHearsTheFirstPeerLimitAndEachChange() {
        var capacity = ClientStreamCapacity()
        #expect(capacity.announcedPeerLimit == nil)
        let first = capacity.peerSettingsApplied(maxConcurrentStreams: 1)
        let changed = capacity.peerSettingsApplied(maxConcurrentStreams: 100)
        let changedAgain = capacity.peerSettingsApplied(maxConcurrentStreams: 100)
        #expect(first && changed && !changedAgain)
        #expect(capacity.announcedPeerLimit == 100)
    }

    @Test func goAwayAndCloseRejectSubmits() {
        var capacity = ClientStreamCapacity()
        let open = capacity.refusal(ended: false, requestAllowed: true, receivedGoAwayLastStreamID: nil, streamIDsExhausted: false)
        #expect(open == nil)
        // A GOAWAY received: nghttp2 refuses, and the reason names its last-stream-id.
        let afterGoAway = capacity.refusal(ended: false, requestAllowed: false, receivedGoAwayLastStreamID: 7, streamIDsExhausted: false)
        #expect(afterGoAway?.description == "GOAWAY received (last-stream-id 7)")
        let afterClose = capacity.refusal(ended: true, requestAllowed: false, receivedGoAwayLastStreamID: 7, streamIDsExhausted: false)
        #expect(afterClose?.description == "connection closed")
        // Our GOAWAY refuses from the call on, while nghttp2 still allows requests (the frame has
        // not left); one queued, the next call queues nothing.
        let queued = capacity.queueGoAway()
        let queuedAgain = capacity.queueGoAway()
        #expect(queued && !queuedAgain)
        let afterOurGoAway = capacity.refusal(
            ended: false,
            requestAllowed: true,
            receivedGoAwayLastStreamID: nil,
            streamIDsExhausted: false
        )
        #expect(afterOurGoAway == .goAwaySent)
        // Both ways: the server's GOAWAY is the reason, as it says which streams it processed.
        let bothWays = capacity.refusal(ended: false, requestAllowed: false, receivedGoAwayLastStreamID: 3, streamIDsExhausted: false)
        #expect(bothWays == .goAwayReceived(lastStreamID: 3))
    }

    @Test func nghttp2sOwnRefusalIsNamed() {
        let capacity = ClientStreamCapacity()
        let exhausted = capacity.refusal(ended: false, requestAllowed: false, receivedGoAwayLastStreamID: nil, streamIDsExhausted: true)
        #expect(exhausted?.description == "stream ids exhausted")
        let closing = capacity.refusal(ended: false, requestAllowed: false, receivedGoAwayLastStreamID: nil, streamIDsExhausted: false)
        #expect(closing == .goAwaySent)
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
