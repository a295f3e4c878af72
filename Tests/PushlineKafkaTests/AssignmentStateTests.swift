import PushlineKafka
import Testing

/// Takes a record that must be handed out.
private func taken(_ state: inout AssignmentState, _ partition: TopicPartition, _ offset: Int64) throws -> RecordID {
    let id = state.take(partition, offset: offset)
    return try #require(id)
}

@Suite struct AssignmentStateTests {
    let p0 = TopicPartition(topic: "jobs", partition: 0)
    let p1 = TopicPartition(topic: "jobs", partition: 1)

    @Test func recordsOfUnassignedPartitionsAreDropped() throws {
        var state = AssignmentState()
        #expect(state.take(p0, offset: 0) == nil)
        state.assign([p0])
        #expect(try taken(&state, p0, 0).offset == 0)
        #expect(state.take(p1, offset: 0) == nil)
    }

    @Test func storesEachAdvanceOnceAndOnlyForTheContiguousPrefix() throws {
        var state = AssignmentState()
        state.assign([p0, p1])
        let a = try taken(&state, p0, 0)
        let b = try taken(&state, p0, 1)
        let c = try taken(&state, p1, 7)
        #expect(state.complete(b) == false)
        #expect(state.takeOffsetsToStore().isEmpty)
        #expect(state.complete(a) == true)
        #expect(state.complete(c) == true)
        let stored = Dictionary(uniqueKeysWithValues: state.takeOffsetsToStore().map { ($0.0, $0.1) })
        #expect(stored == [p0: 2, p1: 8])
        #expect(state.takeOffsetsToStore().isEmpty)
        #expect(state.inFlight() == 0)
    }

    /// The intake starts a run of a poll batch's records at once (`KafkaConsumer.start(_: [RecordID])`
    /// maps `start` over them under one lock). A revoke that begins between the poll and the run's
    /// start: the revoked partition's records do not start (the next owner sends them: nothing
    /// twice), the revoke waits only for what started, and its final offset stops before them
    /// (nothing lost).
    @Test func aRevokeInTheMiddleOfABatchStartsOnlyTheKeptPartitionsRecords() throws {
        var state = AssignmentState()
        state.assign([p0, p1])
        let batch = [try taken(&state, p0, 0), try taken(&state, p1, 5), try taken(&state, p0, 1), try taken(&state, p1, 6)]
        state.beginRevoke([p1])
        let started = batch.map { state.start($0) }
        #expect(started == [true, false, true, false])
        #expect(state.started([p1]) == 0, "the revoke has nothing of p1 to wait for")
        #expect(state.started([p0]) == 2)
        let final = state.finishRevoke([p1])
        #expect(final.isEmpty, "no offset of p1 is stored past its unstarted records")
        _ = state.complete(batch[0])
        _ = state.complete(batch[2])
        #expect(state.takeOffsetsToStore().map(\.1) == [2])
    }

    @Test func revokeStopsHandingOutAndIgnoresLateCompletions() throws {
        var state = AssignmentState()
        state.assign([p0])
        let first = try taken(&state, p0, 10)
        let second = try taken(&state, p0, 11)
        state.beginRevoke([p0])
        #expect(state.take(p0, offset: 12) == nil)
        #expect(state.inFlight([p0]) == 2)
        _ = state.complete(first)
        #expect(state.inFlight([p0]) == 1)
        let final = state.finishRevoke([p0])
        #expect(final.count == 1 && final[0].1 == 11)
        // The partition comes back under a new generation: the old record must not count.
        state.assign([p0])
        let again = try taken(&state, p0, 11)
        #expect(again.generation != second.generation)
        #expect(state.complete(second) == false)
        #expect(state.inFlight([p0]) == 1)
        #expect(state.takeOffsetsToStore().isEmpty)
        #expect(state.complete(again) == true)
        #expect(state.takeOffsetsToStore().map(\.1) == [12])
    }

    @Test func finishRevokeWithNothingCompletedStoresNothing() throws {
        var state = AssignmentState()
        state.assign([p0])
        _ = try taken(&state, p0, 0)
        state.beginRevoke([p0])
        #expect(state.finishRevoke([p0]).isEmpty)
        #expect(state.assigned.isEmpty)
    }

    /// An abandoned record (its work withdrawn in a revoke) no longer holds the revoke up, and
    /// the offset never passes it: the partition's next owner does it.
    @Test func anAbandonedRecordEndsTheWaitButIsNeverCommitted() throws {
        var state = AssignmentState()
        state.assign([p0])
        let first = try taken(&state, p0, 0)
        let held = try taken(&state, p0, 1)
        let started = (state.start(first), state.start(held))
        #expect(started == (true, true))
        #expect(state.generations([p0, p1]) == [first.generation], "only assigned partitions have one")
        state.beginRevoke([p0])
        _ = state.complete(first)
        #expect(state.started([p0]) == 1)
        state.abandon(held)
        #expect(state.started([p0]) == 0, "nothing left to wait for")
        #expect(state.finishRevoke([p0]).map(\.1) == [1], "the commit stops before the abandoned record")
        // An abandon from an older generation does not touch a new one's count.
        state.assign([p0])
        let again = try taken(&state, p0, 1)
        let startedAgain = state.start(again)
        #expect(startedAgain)
        state.abandon(held)
        #expect(state.started([p0]) == 1)
    }

    /// A revoke waits for started records only: one handed out but not started when the revoke
    /// began is refused at start, left uncompleted, and so left to the next owner.
    @Test func aRevokeWaitsOnlyForStartedRecordsAndRefusesToStartTheRest() throws {
        var state = AssignmentState()
        state.assign([p0])
        let started = try taken(&state, p0, 0)
        let waiting = try taken(&state, p0, 1)
        let didStart = state.start(started)
        #expect(didStart)
        #expect(state.started([p0]) == 1)
        state.beginRevoke([p0])
        let startedLate = state.start(waiting)
        #expect(startedLate == false, "not started once its partition is being revoked")
        #expect(state.started([p0]) == 1)
        _ = state.complete(started, weight: 100)
        #expect(state.started([p0]) == 0, "the drain is over")
        #expect(state.finishRevoke([p0]).map(\.1) == [1], "the commit stops before the record never started")
    }

    /// `uncommittedWeight`: completed weight until the offset that covers it is committed.
    @Test func uncommittedWeightFallsAsOffsetsAreCommitted() throws {
        var state = AssignmentState()
        state.assign([p0, p1])
        let ids = try (0..<3).map { try taken(&state, p0, Int64($0)) }
        let other = try taken(&state, p1, 5)
        for id in ids + [other] {
            let didStart = state.start(id)
            #expect(didStart)
        }
        _ = state.complete(ids[1], weight: 10)
        #expect(state.uncommittedWeight == 10, "completed ahead of the prefix counts too")
        _ = state.complete(ids[0], weight: 1)
        _ = state.complete(other, weight: 7)
        let stored = Dictionary(uniqueKeysWithValues: state.takeOffsetsToStore().map { ($0.0, $0.1) })
        #expect(stored == [p0: 2, p1: 6])
        #expect(state.uncommittedWeight == 18)
        state.committed([(p0, 2)])
        #expect(state.uncommittedWeight == 7)
        _ = state.complete(ids[2], weight: 100)
        _ = state.takeOffsetsToStore()
        state.committed([(p0, 3), (p1, 6)])
        #expect(state.uncommittedWeight == 0)
        // A revoke forgets what was not committed: those records belong to the next owner now.
        let late = try taken(&state, p1, 6)
        let lateStarted = state.start(late)
        #expect(lateStarted)
        _ = state.complete(late, weight: 4)
        _ = state.finishRevoke([p1])
        #expect(state.uncommittedWeight == 0)
    }

    /// Look-ups remember the last partition, and offsets to store are flagged per partition: both
    /// must hold across partitions that interleave, a revoke that removes the remembered one while
    /// it has an offset to store, and a partition assigned again (every index may move).
    @Test func interleavedPartitionsAndAssignmentChangesStoreExactlyTheirAdvances() throws {
        let partitions = (0..<6).map { TopicPartition(topic: "jobs.\($0 % 2)", partition: Int32($0)) }
        var state = AssignmentState()
        state.assign(Array(partitions.prefix(3)))
        var ids: [RecordID] = []
        for offset in Int64(0)..<4 {
            for partition in partitions.prefix(3) { ids.append(try taken(&state, partition, offset)) }
        }
        for id in ids {
            let didStart = state.start(id)
            #expect(didStart)
        }
        // p0 and p2 advance (p1's first record is not done); p2 was looked up last.
        for id in ids where id.partition != 1 || id.offset > 0 { _ = state.complete(id) }
        // Assigning three more moves the dictionary's storage; removing p2 forgets its advance.
        state.assign(Array(partitions.suffix(3)))
        _ = state.finishRevoke([partitions[2]])
        let revokedRecord = state.take(partitions[2], offset: 4)
        #expect(revokedRecord == nil)
        let late = try taken(&state, partitions[5], 0)
        let lateStarted = state.start(late)
        let lateAdvanced = state.complete(late)
        let firstAdvanced = state.complete(ids[1])
        #expect(lateStarted && lateAdvanced)
        #expect(firstAdvanced, "p1's first record: its whole prefix is done")
        let stored = Dictionary(uniqueKeysWithValues: state.takeOffsetsToStore().map { ($0.0, $0.1) })
        #expect(stored == [partitions[0]: 4, partitions[1]: 4, partitions[5]: 1])
        #expect(state.takeOffsetsToStore().isEmpty)
        // Assigned again: a fresh generation, and it stores its own advance once.
        state.assign([partitions[2]])
        let again = try taken(&state, partitions[2], 10)
        let againStarted = state.start(again)
        let againAdvanced = state.complete(again)
        #expect(againStarted && againAdvanced)
        #expect(state.takeOffsetsToStore().map(\.1) == [11])
    }
}
