import Testing

@testable import PushlineWorker

@Suite struct IntakeRunTests {
    /// The records a run takes, for weights fed in order and the gate's room.
    static func taken(_ weights: [Int], room: Int) -> Int {
        var run = IntakeRun(room: room)
        for weight in weights where run.wantsMore { run.add(weight: weight) }
        return run.count
    }

    @Test func aRunTakesRecordsWhileTheGateHasRoom() {
        #expect(Self.taken([1, 1, 1, 1, 1], room: 3) == 3)
        #expect(Self.taken([1, 1, 1], room: 10) == 3)
    }

    @Test func theLastRecordMayTakeTheGatePastItsLimit() {
        // As one job always could: room 3, a job of 100 is admitted whole, and nothing after it.
        #expect(Self.taken([2, 100, 1], room: 3) == 2)
    }

    @Test func aRunAlwaysTakesOneRecord() {
        #expect(Self.taken([5, 1], room: 0) == 1)
        #expect(Self.taken([5, 1], room: -4) == 1)
    }

    @Test func rejectedRecordsWeighNothing() {
        #expect(Self.taken([0, 0, 0, 1, 0], room: 1) == 4)
    }
}
