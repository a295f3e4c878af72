import Testing

@testable import PushlineKafka

/// Failed commits piled up during an outage and answered together at the reconnect (99
/// `UNKNOWN_MEMBER_ID` in 2 ms under `group.protocol=consumer`) give one warning and a count, not
/// a line each.
@Suite struct CommitFailureFoldingTests {
    let unknownMember = KafkaError.Code(rawValue: 25)
    let staleEpoch = KafkaError.Code(rawValue: 113)
    let start = ContinuousClock.now

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test func aBurstOfOneErrorIsOneWarningAndItsCountGoesWithTheNextSuccess() {
        var folding = CommitFailureFolding(window: .seconds(10))
        #expect(folding.failed(unknownMember, now: at(0)) == .warn(folded: nil))
        for step in 1...98 {
            #expect(folding.failed(unknownMember, now: at(step / 50)) == .fold)
        }
        #expect(folding.succeeded() == .init(code: unknownMember, count: 98))
        #expect(folding.succeeded() == nil, "told once")
        #expect(folding.failed(unknownMember, now: at(100)) == .warn(folded: nil), "after a success the next failure warns")
    }

    @Test func theSameErrorWarnsAgainOnceTheWindowHasPassedWithTheCountOfTheFoldedOnes() {
        var folding = CommitFailureFolding(window: .seconds(10))
        #expect(folding.failed(unknownMember, now: at(0)) == .warn(folded: nil))
        #expect(folding.failed(unknownMember, now: at(200)) == .fold)
        #expect(folding.failed(unknownMember, now: at(9_999)) == .fold)
        #expect(folding.failed(unknownMember, now: at(10_000)) == .warn(folded: .init(code: unknownMember, count: 2)))
        #expect(folding.failed(unknownMember, now: at(10_200)) == .fold, "the window restarts at each warning")
    }

    @Test func anotherErrorWarnsAtOnceAndTellsTheFoldedOnesOfTheFirst() {
        var folding = CommitFailureFolding(window: .seconds(10))
        #expect(folding.failed(unknownMember, now: at(0)) == .warn(folded: nil))
        #expect(folding.failed(unknownMember, now: at(1)) == .fold)
        #expect(folding.failed(staleEpoch, now: at(2)) == .warn(folded: .init(code: unknownMember, count: 1)))
        #expect(folding.failed(staleEpoch, now: at(3)) == .fold)
        #expect(folding.succeeded() == .init(code: staleEpoch, count: 1))
    }

    @Test func aSuccessWithNothingFoldedTellsNothing() {
        var folding = CommitFailureFolding(window: .seconds(10))
        #expect(folding.succeeded() == nil)
        #expect(folding.failed(staleEpoch, now: at(0)) == .warn(folded: nil))
        #expect(folding.succeeded() == nil)
    }
}
