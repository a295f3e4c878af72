import PushlineKafka
import Testing

@Suite struct OffsetTrackerTests {
    @Test func storesOnePastTheContiguousCompletedPrefix() {
        var tracker = OffsetTracker()
        for offset in Int64(10)..<15 { #expect(tracker.take(offset) == .tracked) }
        #expect(tracker.complete(12) == .pending)
        #expect(tracker.complete(11) == .pending)
        #expect(tracker.storableOffset == nil)
        #expect(tracker.complete(10) == .advanced(storeOffset: 13))
        #expect(tracker.inFlightCount == 2)
        #expect(tracker.complete(14) == .pending)
        #expect(tracker.complete(13) == .advanced(storeOffset: 15))
        #expect(tracker.inFlightCount == 0)
    }

    @Test func ignoresUnknownAndRepeatedCompletions() {
        var tracker = OffsetTracker()
        _ = tracker.take(0)
        _ = tracker.take(1)
        #expect(tracker.complete(7) == .ignored)
        #expect(tracker.complete(1) == .pending)
        #expect(tracker.complete(1) == .ignored)
        #expect(tracker.complete(0) == .advanced(storeOffset: 2))
        #expect(tracker.complete(0) == .ignored)
    }

    @Test func gapsInOffsetsDoNotBlockTheStore() {
        // Compaction and transaction markers leave holes; contiguity is over taken records.
        var tracker = OffsetTracker()
        _ = tracker.take(5)
        _ = tracker.take(9)
        #expect(tracker.complete(9) == .pending)
        #expect(tracker.complete(5) == .advanced(storeOffset: 10))
    }

    /// An offset is found by its distance from the first in flight when the offsets run without a
    /// hole; with holes, that guess lands on another offset (or past the end) and must not be
    /// taken for it.
    @Test func aHoleNeverPassesForTheOffsetAtItsDistance() {
        var tracker = OffsetTracker()
        for offset: Int64 in [10, 11, 14, 15, 16] { _ = tracker.take(offset) }
        #expect(tracker.complete(12) == .ignored)  // distance 2 holds 14
        #expect(tracker.complete(13) == .ignored)  // distance 3 holds 15
        #expect(tracker.complete(17) == .ignored)  // distance 7: past the end
        #expect(tracker.complete(9) == .ignored)  // below the first
        #expect(tracker.complete(16) == .pending)  // found by search: distance 6 is past the end
        #expect(tracker.complete(11) == .pending)  // at its distance
        #expect(tracker.complete(10) == .advanced(storeOffset: 12))
        #expect(tracker.complete(14) == .advanced(storeOffset: 15))
        #expect(tracker.complete(15) == .advanced(storeOffset: 17))
        #expect(tracker.inFlightCount == 0)
    }

    @Test func rewoundOffsetRestartsTracking() {
        var tracker = OffsetTracker()
        _ = tracker.take(100)
        _ = tracker.take(101)
        #expect(tracker.take(50) == .restarted)
        #expect(tracker.complete(100) == .ignored)
        #expect(tracker.complete(50) == .advanced(storeOffset: 51))
    }

    @Test(arguments: [1, 2, 3, 42, 1234, 98765] as [UInt64])
    func randomCompletionOrderNeverStoresPastAnIncompleteRecord(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var tracker = OffsetTracker()
        let count = Int.random(in: 1...3000, using: &random)
        // Offsets with random gaps, taken in order.
        var offsets: [Int64] = []
        var next = Int64.random(in: 0...1000, using: &random)
        for _ in 0..<count {
            offsets.append(next)
            #expect(tracker.take(next) == .tracked)
            next += Int64.random(in: 1...3, using: &random)
        }
        var completed = Set<Int64>()
        var highestStored: Int64 = -1
        var prefixEnd = 0
        for offset in offsets.shuffled(using: &random) {
            completed.insert(offset)
            let result = tracker.complete(offset)
            // The expected store: one past the longest completed prefix of `offsets`.
            while prefixEnd < offsets.count && completed.contains(offsets[prefixEnd]) { prefixEnd += 1 }
            let expected = prefixEnd == 0 ? nil : offsets[prefixEnd - 1] + 1
            #expect(tracker.storableOffset == expected)
            if case .advanced(let store) = result {
                #expect(store > highestStored)
                highestStored = store
                // Never past an incomplete record.
                #expect(prefixEnd == offsets.count || offsets[prefixEnd] >= store)
            }
        }
        // Every completed prefix is eventually stored: all done, so one past the last offset.
        #expect(tracker.storableOffset == offsets.last! + 1)
        #expect(tracker.inFlightCount == 0)
    }

    @Test func interleavedTakeAndCompleteAcrossCompaction() {
        var random = SeededGenerator(seed: 7)
        var tracker = OffsetTracker()
        var inFlight: [Int64] = []
        var nextOffset: Int64 = 0
        for _ in 0..<50_000 {
            if inFlight.isEmpty || (inFlight.count < 500 && Bool.random(using: &random)) {
                _ = tracker.take(nextOffset)
                inFlight.append(nextOffset)
                nextOffset += 1
            } else {
                let offset = inFlight.remove(at: Int.random(in: 0..<inFlight.count, using: &random))
                _ = tracker.complete(offset)
            }
            let lowestIncomplete = inFlight.min() ?? nextOffset
            if let stored = tracker.storableOffset {
                #expect(stored <= lowestIncomplete)
            }
            #expect(tracker.inFlightCount == inFlight.count)
        }
        for offset in inFlight { _ = tracker.complete(offset) }
        #expect(tracker.storableOffset == nextOffset)
    }
}
