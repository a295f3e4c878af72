import PushlineKafka
import Testing

/// What a lost assignment keeps (`LostPartition`, through `AssignmentState`): records finished
/// before or after the loss are skipped when the partition comes back to the member unchanged,
/// records done in part come back with what was kept, and the memory is forgotten when another
/// member committed, when it expires, or when a graceful revoke commits.
@Suite struct LostAssignmentTests {
    let p0 = TopicPartition(topic: "jobs", partition: 0)
    let start = ContinuousClock.now

    /// What the owner kept of a record done in part.
    final class Kept: Sendable {
        let offset: Int64
        init(_ offset: Int64) { self.offset = offset }
    }

    /// Takes offsets `range` of p0 and starts them.
    func takeAndStart(_ state: inout AssignmentState, _ range: ClosedRange<Int64>) throws -> [RecordID] {
        var ids: [RecordID] = []
        for offset in range {
            let taken = state.take(p0, offset: offset)
            let id = try #require(taken)
            let started = state.start(id)
            #expect(started)
            ids.append(id)
        }
        return ids
    }

    /// Fetches p0 again from `offset` to `through`: the records handed out, with what was kept.
    func refetch(_ state: inout AssignmentState, _ offsets: ClosedRange<Int64>) -> [Int64: (any AnyObject & Sendable)?] {
        var handed: [Int64: (any AnyObject & Sendable)?] = [:]
        for offset in offsets {
            var resumed: (any AnyObject & Sendable)?
            if state.take(p0, offset: offset, resumed: &resumed) != nil { handed[offset] = resumed }
        }
        return handed
    }

    @Test func aPartitionBackUnchangedSkipsWhatWasFinishedBeforeAndAfterTheLoss() throws {
        var state = AssignmentState()
        state.assign([p0])
        let ids = try takeAndStart(&state, 10...19)
        // 10-12 done and committed; 13-14 done, stored, commit unanswered (Kafka is cut); 16 done
        // ahead of 15.
        for id in ids[0...2] { _ = state.complete(id, weight: 3) }
        #expect(state.takeOffsetsToStore().map(\.1) == [13])
        state.committed([(p0, 13)])
        for id in ids[3...4] { _ = state.complete(id, weight: 3) }
        #expect(state.takeOffsetsToStore().map(\.1) == [15])
        _ = state.complete(ids[6], weight: 3)
        _ = state.finishRevoke([p0], lost: true, now: start)
        #expect(state.lostKept.partitions == 1)
        // After the loss: 15 completes (its results reached Kafka), 17 is given up in part, 18 is
        // given up with nothing kept; 19 never ends.
        _ = state.complete(ids[5], weight: 3)
        state.abandon(ids[7], resumable: Kept(17))
        state.abandon(ids[8])
        state.assign([p0])
        let handed = refetch(&state, 13...21)
        #expect(handed.keys.sorted() == [17, 18, 19, 20, 21], "13-16 are skipped: their results are in Kafka")
        #expect((handed[17] as? Kept)?.offset == 17)
        #expect(handed[18]! == nil)
        #expect(state.takeOffsetsToStore().map(\.1) == [17], "the skipped records are completed")
        #expect(state.uncommittedWeight == 12, "each skipped record keeps its weight (13-14 share the prefix's)")
        #expect(state.lostRecordsSkipped == 4)
        #expect(state.lostRecordsResumed == 1)
        #expect(state.lostKept.partitions == 0, "spent once the last offset taken before the loss came back")
    }

    @Test func anOffsetCommitAskedForWithNoAnswerIsWhereThePartitionMayResume() throws {
        var state = AssignmentState()
        state.assign([p0])
        let ids = try takeAndStart(&state, 0...3)
        for id in ids { _ = state.complete(id) }
        #expect(state.takeOffsetsToStore().map(\.1) == [4])
        // The commit of 4 reached the broker, but its answer was lost in the cut.
        _ = state.finishRevoke([p0], lost: true, now: start)
        state.assign([p0])
        #expect(refetch(&state, 4...5).keys.sorted() == [4, 5])
        #expect(state.lostMemoriesForgotten == 0)
    }

    @Test func anotherMembersCommitForgetsTheMemory() throws {
        var state = AssignmentState()
        state.assign([p0])
        let ids = try takeAndStart(&state, 0...5)
        for id in ids[3...] { _ = state.complete(id) }
        _ = state.finishRevoke([p0], lost: true, now: start)
        state.assign([p0])
        // Another member committed 2 meanwhile: the fetch begins there, and 3-5 are done again.
        #expect(refetch(&state, 2...5).keys.sorted() == [2, 3, 4, 5])
        #expect(state.lostMemoriesForgotten == 1)
        #expect(state.lostRecordsSkipped == 0)
    }

    @Test func theMemoryExpires() throws {
        var state = AssignmentState(lostRetention: .seconds(60))
        state.assign([p0])
        let ids = try takeAndStart(&state, 0...1)
        _ = state.complete(ids[1])
        _ = state.finishRevoke([p0], lost: true, now: start)
        state.forgetExpiredLost(now: start + .seconds(59))
        #expect(state.lostKept.partitions == 1)
        state.forgetExpiredLost(now: start + .seconds(60))
        #expect(state.lostKept.partitions == 0)
        state.assign([p0])
        #expect(refetch(&state, 0...1).keys.sorted() == [0, 1])
    }

    @Test func aGracefulRevokeForgetsTheMemory() throws {
        var state = AssignmentState()
        state.assign([p0])
        let ids = try takeAndStart(&state, 0...2)
        _ = state.complete(ids[2])
        _ = state.finishRevoke([p0], lost: true, now: start)
        state.assign([p0])
        state.beginRevoke([p0])
        _ = state.finishRevoke([p0])
        #expect(state.lostKept.partitions == 0)
        _ = state.complete(ids[1])
        state.assign([p0])
        #expect(refetch(&state, 0...2).keys.sorted() == [0, 1, 2])
    }

    @Test func aPartitionLostAgainBeforeItsMemoryIsSpentKeepsTheRest() throws {
        var state = AssignmentState()
        state.assign([p0])
        let first = try takeAndStart(&state, 0...5)
        _ = state.complete(first[0])
        for id in first[3...] { _ = state.complete(id) }
        _ = state.finishRevoke([p0], lost: true, now: start)
        state.assign([p0])
        // Back at 1 (where the first assignment's commit would be had it been confirmed... it was
        // not: the fetch begins at 0); lost again after 0-1.
        #expect(refetch(&state, 0...1).keys.sorted() == [1])
        _ = state.finishRevoke([p0], lost: true, now: start)
        state.assign([p0])
        #expect(refetch(&state, 0...6).keys.sorted() == [1, 2, 6], "3-5 stay skipped: kept across both losses")
    }

    /// The at-least-once property, over 200,000 random steps of one partition's life with losses,
    /// returns, other members' commits, late completions and abandons: a record is skipped only
    /// if its work was completed (under some generation), and a committed offset never passes a
    /// record whose work was not completed. The oracle is the set of offsets ever completed.
    @Test func randomLivesNeverSkipOrCommitUnfinishedWork() throws {
        var random = SeededGenerator(seed: 52)
        var state = AssignmentState(lostRetention: .seconds(30))
        var now = start
        let end: Int64 = 1_000_000
        var committed: Int64 = 0
        var fetch: Int64 = 0
        var assigned = false
        var completedEver = Set<Int64>()
        var handed: [RecordID] = []
        var started: [RecordID] = []
        var skipped = 0
        var resumed = 0
        func commit(_ offsets: [(TopicPartition, Int64)]) {
            for (_, offset) in offsets {
                for o in committed..<max(committed, offset) {
                    #expect(completedEver.contains(o), "committed past unfinished \(o)")
                }
                committed = max(committed, offset)
            }
        }
        for _ in 0..<200_000 {
            now += .milliseconds(Int.random(in: 0...50, using: &random))
            state.forgetExpiredLost(now: now)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<3 where !assigned:
                if Bool.random(using: &random), Int.random(in: 0..<4, using: &random) == 0 {
                    // Another member did some work and committed it meanwhile.
                    let moved = committed + Int64.random(in: 0...3, using: &random)
                    for o in committed..<moved { completedEver.insert(o) }
                    committed = moved
                }
                state.assign([p0])
                assigned = true
                fetch = committed
                handed.removeAll()
            case 0..<40 where assigned && fetch < end:
                var kept: (any AnyObject & Sendable)?
                if let id = state.take(p0, offset: fetch, resumed: &kept) {
                    handed.append(id)
                    if let kept = kept as? Kept {
                        #expect(kept.offset == fetch)
                        resumed += 1
                    }
                } else {
                    #expect(completedEver.contains(fetch), "skipped unfinished \(fetch)")
                    skipped += 1
                }
                fetch += 1
            case 40..<55 where !handed.isEmpty:
                let id = handed.removeFirst()
                if state.start(id) { started.append(id) }
            case 55..<75 where !started.isEmpty:
                let id = started.remove(at: Int.random(in: 0..<started.count, using: &random))
                _ = state.complete(id, weight: Int.random(in: 1...5, using: &random))
                completedEver.insert(id.offset)
            case 75..<78 where !started.isEmpty:
                let id = started.remove(at: Int.random(in: 0..<started.count, using: &random))
                state.abandon(id, resumable: Bool.random(using: &random) ? Kept(id.offset) : nil)
            case 78..<88 where assigned:
                let offsets = state.takeOffsetsToStore()
                // A commit in a Kafka outage may go through with its answer lost.
                switch Int.random(in: 0..<3, using: &random) {
                case 0: commit(offsets)
                case 1:
                    commit(offsets)
                    state.committed(offsets)
                default: break
                }
            case 88..<90 where assigned:
                _ = state.finishRevoke([p0], lost: true, now: now)
                assigned = false
            case 90..<91 where assigned:
                state.beginRevoke([p0])
                commit(state.finishRevoke([p0]))
                assigned = false
            default:
                break
            }
        }
        #expect(skipped > 1000, "the memory was exercised: \(skipped) skipped")
        #expect(resumed > 50, "\(resumed) resumed")
        #expect(state.lostMemoriesForgotten > 10)
    }
}
