import Testing

@testable import PushlineKafka

/// The consumer machine driven by events alone: no broker, no poll thread, the clock an input.
@Suite struct ConsumerStateMachineTests {
    let jobs0 = TopicPartition(topic: "jobs", partition: 0)
    let jobs1 = TopicPartition(topic: "jobs", partition: 1)
    let urgent0 = TopicPartition(topic: "urgent", partition: 0)
    let start = ContinuousClock.now

    /// A machine with small buffers and batches and the broker guards on (a 15 s close join wait,
    /// a 22 s stalled-join limit); the rest is the configuration's defaults.
    func machine(_ change: (inout ConsumerStateMachine.Settings) -> Void = { _ in }) -> ConsumerStateMachine {
        var settings = ConsumerStateMachine.Settings(
            KafkaConsumerConfiguration(
                bootstrapServers: "unused:9092",
                groupID: "tests",
                topics: ["jobs", "urgent"],
                priorityTopics: ["urgent"],
                revokeDrainTimeout: .seconds(10),
                maxBatchSize: 3,
                maxBufferedRecords: 4,
                pollInterval: .milliseconds(10),
                commitInterval: .milliseconds(200),
                closeJoinWait: .seconds(15),
                stalledJoinLimit: .seconds(22)
            )
        )
        change(&settings)
        return ConsumerStateMachine(settings: settings, now: start)
    }

    func at(_ milliseconds: Int) -> ContinuousClock.Instant {
        start + .milliseconds(milliseconds)
    }

    func plan(_ machine: inout ConsumerStateMachine, at milliseconds: Int, lost: Bool = false) throws -> ConsumerStateMachine.PollPlan {
        guard case .poll(let plan) = machine.tick(.init(now: at(milliseconds), assignmentLost: lost)) else {
            Issue.record("expected a poll plan")
            throw CancellationError()
        }
        return plan
    }

    func take(_ machine: inout ConsumerStateMachine, _ partition: TopicPartition, _ offsets: ClosedRange<Int64>) throws -> [RecordID] {
        try offsets.map { offset in
            let record = machine.take(partition, offset: offset)
            let taken = try #require(record)
            machine.handedOut(1, lane: taken.lane)
            return taken.id
        }
    }

    // MARK: - Assignments

    @Test func anAssignmentTakesRoutesAndRunsItsPartitionsAndEndsThePendingJoin() {
        var machine = machine()
        #expect(machine.joinPending)
        let actions = machine.assigned([jobs0, urgent0], cooperative: true, now: at(0))
        #expect(!machine.joinPending)
        #expect(machine.lastRebalance?.event == "assigned 2")
        #expect(names(actions) == ["assign(2, incremental)", "route(jobs[0])", "resume(2)", "announceAssigned(2)"])
    }

    @Test func aPartitionAssignedWhileItsLaneIsPausedIsPausedAtOnce() throws {
        var machine = machine()
        _ = machine.assigned([jobs0], cooperative: true, now: at(0))
        machine.setUserPaused(true)
        let plan = try plan(&machine, at: 10)
        #expect(names(plan.actions) == ["pause(1, bulk)"])
        let actions = machine.assigned([jobs1, urgent0], cooperative: true, now: at(20))
        #expect(names(actions) == ["assign(2, incremental)", "route(jobs[1])", "pause(1)", "resume(1)", "announceAssigned(2)"])
        guard case .setFetchPaused(true, let paused, _) = actions[2], case .setFetchPaused(false, let running, _) = actions[3] else {
            Issue.record("no pause and resume")
            return
        }
        #expect(paused == [jobs1])
        #expect(running == [urgent0])
    }

    // MARK: - Revokes

    /// A poll batch's records were handed out; a revoke of one partition begins before the batch
    /// starts. The revoked partition's records do not start (nothing twice), the revoke waits
    /// only for what started, and the commit stops before them (nothing lost).
    @Test func aRevokeInTheMiddleOfABatchStartsNothingRevokedAndCommitsOnlyWhatCompleted() throws {
        var machine = machine()
        _ = machine.assigned([jobs0, jobs1], cooperative: true, now: at(0))
        let batch = try take(&machine, jobs0, 0...1) + take(&machine, jobs1, 5...6)
        let first = machine.start(batch[0])
        #expect(first)
        let (drain, began) = machine.beginRevoke([jobs1], lost: false, now: at(100))
        #expect(drain.deadline == at(10_100))
        #expect(drain.started == 0)
        #expect(began.isEmpty, "nothing of jobs[1] started: no notice")
        let started = batch[1...].map { machine.start($0) }
        #expect(started == [true, false, false])
        let late = machine.take(jobs1, offset: 7)
        #expect(late == nil, "no more records of a partition being revoked")
        #expect(machine.unfinished([jobs1]) == 0)
        let finish = machine.finishRevoke([jobs1], lost: false, cooperative: true, drain: drain, unfinished: 0, now: at(100))
        #expect(names(finish) == ["unassign(1, incremental)", "announceRevoked(1)"], "no offset of jobs[1] past its unstarted records")
        #expect(machine.joinPending, "librdkafka rejoins after a revoke")
        #expect(machine.lastRebalance?.event == "revoked 1")
        machine.complete(batch[0], weight: 1)
        machine.complete(batch[1], weight: 1)
        let plan = try plan(&machine, at: 300)
        #expect(names(plan.actions) == ["store(jobs[0]@2)", "commit(jobs[0]@2)"])
    }

    @Test func aRevokeWithStartedRecordsNotifiesWaitsAndCommitsWhatCompleted() throws {
        var machine = machine()
        _ = machine.assigned([jobs0], cooperative: false, now: at(0))
        let ids = try take(&machine, jobs0, 0...2)
        let started = ids.map { machine.start($0) }
        #expect(started == [true, true, true])
        let (drain, began) = machine.beginRevoke([jobs0], lost: false, now: at(50))
        #expect(drain.started == 3)
        #expect(names(began) == ["notify(began)"])
        machine.complete(ids[0], weight: 2)
        machine.complete(ids[1], weight: 2)
        #expect(machine.unfinished([jobs0]) == 1)
        let finish = machine.finishRevoke([jobs0], lost: false, cooperative: false, drain: drain, unfinished: 1, now: at(10_050))
        #expect(
            names(finish) == ["notify(givingUp)", "store(jobs[0]@2)", "commitNow(jobs[0]@2)", "unassign(1, eager)", "announceRevoked(1)"]
        )
        #expect(machine.assignments.assigned.isEmpty)
        #expect(machine.uncommitted.isEmpty)
    }

    @Test func aLostAssignmentGivesUpAtOnceAndCommitsNothing() throws {
        var machine = machine()
        _ = machine.assigned([jobs0], cooperative: true, now: at(0))
        let ids = try take(&machine, jobs0, 0...1)
        _ = ids.map { machine.start($0) }
        machine.complete(ids[0], weight: 1)
        let (drain, began) = machine.beginRevoke([jobs0], lost: true, now: at(50))
        #expect(names(began) == ["notify(givingUp)"])
        let finish = machine.finishRevoke([jobs0], lost: true, cooperative: true, drain: drain, unfinished: 1, now: at(50))
        #expect(names(finish) == ["unassign(1, incremental)", "announceRevoked(1)"])
        #expect(machine.lastRebalance?.event == "lost 1")
        #expect(machine.assignments.uncommittedWeight == 0)
    }

    @Test func aRebalanceErrorDropsTheWholeAssignment() throws {
        var machine = machine()
        _ = machine.assigned([jobs0, jobs1], cooperative: true, now: at(0))
        let id = try take(&machine, jobs0, 0...0)[0]
        _ = machine.start(id)
        machine.complete(id, weight: 1)
        let actions = machine.rebalanceFailed(cooperative: true, now: at(10))
        #expect(names(actions) == ["unassign(2, incremental)", "announceRevoked(2)"])
        #expect(machine.assignments.assigned.isEmpty)
        #expect(try plan(&machine, at: 500).actions.isEmpty, "nothing of the dropped partitions is stored or committed")
    }

    // MARK: - Commits

    @Test func offsetsAreStoredAtOnceAndCommittedEveryCommitInterval() throws {
        var machine = machine()
        _ = machine.assigned([jobs0], cooperative: true, now: at(0))
        let ids = try take(&machine, jobs0, 0...2)
        _ = ids.map { machine.start($0) }
        machine.complete(ids[0], weight: 3)
        #expect(names(try plan(&machine, at: 50).actions) == ["store(jobs[0]@1)"])
        machine.complete(ids[1], weight: 3)
        #expect(names(try plan(&machine, at: 150).actions) == ["store(jobs[0]@2)"])
        #expect(names(try plan(&machine, at: 200).actions) == ["commit(jobs[0]@2)"])
        #expect(machine.assignments.uncommittedWeight == 6)
        #expect(try plan(&machine, at: 300).actions.isEmpty, "the next commit waits a whole interval")
        machine.committed([(jobs0, 2)])
        #expect(machine.assignments.uncommittedWeight == 0)
        #expect(try plan(&machine, at: 500).actions.isEmpty, "nothing left to commit")
        machine.complete(ids[2], weight: 3)
        #expect(
            names(try plan(&machine, at: 510, lost: true).actions) == ["store(jobs[0]@3)"],
            "a lost assignment's offsets are not committed"
        )
        #expect(try plan(&machine, at: 520).actions.isEmpty)
        #expect(names(try plan(&machine, at: 710).actions) == ["commit(jobs[0]@3)"], "they stay stored for the next commit")
    }

    // MARK: - Lanes

    @Test func aFullBulkBufferStopsTakingAtOnceAndPausesOnlyAfterASecond() throws {
        var machine = machine()
        _ = machine.assigned([jobs0, urgent0], cooperative: true, now: at(0))
        var plan = try plan(&machine, at: 0)
        #expect(plan.bulkRoom == 3, "a batch at most")
        #expect(!plan.consumerWaits)
        _ = try take(&machine, jobs0, 0...3)
        plan = try self.plan(&machine, at: 10)
        #expect(plan.bulkRoom == 0)
        #expect(plan.consumerWaits, "the consumer queue waits; a reader freeing room wakes it")
        #expect(plan.actions.isEmpty, "a reader a little behind is waited for, not paused")
        plan = try self.plan(&machine, at: 1_010)
        #expect(names(plan.actions) == ["pause(1, bulk)"])
        #expect(machine.lanes.bulk.fetchPaused && !machine.lanes.priority.fetchPaused)
        let wake = machine.read(2, lane: .bulk)
        #expect(wake, "room again: wake the poll")
        let wakeAgain = machine.read(1, lane: .bulk)
        #expect(!wakeAgain, "once")
        plan = try self.plan(&machine, at: 1_020)
        #expect(plan.bulkRoom == 3)
        #expect(names(plan.actions) == ["resume(1, bulk)"])
    }

    @Test func urgentRecordsFlowWhileBulkIsPaused() throws {
        var machine = machine()
        _ = machine.assigned([jobs0, urgent0], cooperative: true, now: at(0))
        machine.setUserPaused(true)
        #expect(names(try plan(&machine, at: 10).actions) == ["pause(1, bulk)"])
        let record = machine.take(urgent0, offset: 0)
        let urgent = try #require(record)
        #expect(urgent.lane == .priority)
        machine.handedOut(1, lane: .priority)
        let started = machine.start(urgent.id)
        #expect(started)
        machine.complete(urgent.id, weight: 1)
        #expect(names(try plan(&machine, at: 20).actions) == ["store(urgent[0]@1)"])
        // The priority lane fills on its own, and pauses only itself.
        _ = try take(&machine, urgent0, 1...4)
        _ = try plan(&machine, at: 30)
        let full = try plan(&machine, at: 1_030)
        #expect(names(full.actions) == ["pause(1, priority)", "commit(urgent[0]@1)"])
        let wake = machine.read(4, lane: .priority)
        #expect(!wake)
        #expect(names(try plan(&machine, at: 1_040).actions) == ["resume(1, priority)"])
        #expect(machine.lanes.bulk.fetchPaused, "the user's pause holds")
    }

    // MARK: - Joins

    @Test func aJoinNotAnsweredForTheLimitIsAbandonedOnce() throws {
        var machine = machine()
        #expect(try plan(&machine, at: 0).actions.isEmpty)
        #expect(try plan(&machine, at: 21_999).actions.isEmpty)
        #expect(names(try plan(&machine, at: 22_000).actions) == ["rejoin(22000 ms, 1)"])
        #expect(try plan(&machine, at: 22_010).actions.isEmpty)
        _ = machine.assigned([jobs0], cooperative: true, now: at(23_000))
        #expect(try plan(&machine, at: 60_000).actions.isEmpty, "an assigned member never rejoins")
    }

    // MARK: - Close

    @Test func aCloseWaitsForStartedRecordsThenCommitsAndLeaves() throws {
        var machine = machine { $0.closeJoinWait = .zero }
        _ = machine.assigned([jobs0, urgent0], cooperative: true, now: at(0))
        let ids = try take(&machine, jobs0, 0...2)
        let started = [machine.start(ids[0]), machine.start(ids[1])]
        #expect(started == [true, true])
        machine.complete(ids[0], weight: 1)
        _ = try plan(&machine, at: 10)  // stores jobs[0]@1
        machine.requestClose(deadline: at(5_000))
        machine.requestClose(deadline: at(9_000))
        guard case .close = machine.tick(.init(now: at(20))) else {
            Issue.record("expected the close to begin")
            return
        }
        let late = machine.take(jobs0, offset: 3)
        #expect(late == nil, "nothing is handed out once closing")
        guard case .drain(let first, nil, nil) = machine.closeStep(now: at(20), assignmentLost: false) else {
            Issue.record("expected the drain to begin")
            return
        }
        #expect(names(first) == ["pause(2)"])
        let startedLate = machine.start(ids[2])
        #expect(!startedLate, "a record not started before the close is the next owner's")
        guard case .drain(let waiting, let until, nil) = machine.closeStep(now: at(30), assignmentLost: false) else {
            Issue.record("expected to wait for the started record")
            return
        }
        #expect(waiting.isEmpty)
        #expect(until == at(40), "waits a poll interval at a time")
        machine.complete(ids[1], weight: 1)
        guard case .leave(let last, 0) = machine.closeStep(now: at(45), assignmentLost: false) else {
            Issue.record("expected to leave")
            return
        }
        #expect(names(last) == ["store(jobs[0]@2)", "commitNow(jobs[0]@2)"], "the deadline of the first request")
    }

    @Test func aCloseLeavesAtTheDeadlineWithRecordsStillStarted() throws {
        var machine = machine { $0.closeJoinWait = .zero }
        _ = machine.assigned([jobs0], cooperative: true, now: at(0))
        let id = try take(&machine, jobs0, 0...0)[0]
        let started = machine.start(id)
        #expect(started)
        machine.requestClose(deadline: at(1_000))
        _ = machine.tick(.init(now: at(10)))
        _ = machine.closeStep(now: at(10), assignmentLost: false)
        guard case .leave(let last, 1) = machine.closeStep(now: at(1_000), assignmentLost: false) else {
            Issue.record("expected to leave with one record unfinished")
            return
        }
        #expect(last.isEmpty, "nothing completed: nothing to commit")
        // The revoke librdkafka serves while closing waits only until the close deadline.
        let (drain, _) = machine.beginRevoke([jobs0], lost: false, now: at(1_001))
        #expect(drain.deadline == at(1_000))
        _ = machine.finishRevoke([jobs0], lost: false, cooperative: true, drain: drain, unfinished: 1, now: at(1_001))
        #expect(!machine.joinPending, "the last revoke: no rejoin")
    }

    @Test func aCloseDuringAPendingJoinWaitsForTheRoundFirst() throws {
        var machine = machine()
        machine.requestClose(deadline: at(10_000))
        _ = machine.tick(.init(now: at(0)))
        guard case .awaitJoin(starting: true, let bound) = machine.closeStep(now: at(0), assignmentLost: false) else {
            Issue.record("expected to wait for the join")
            return
        }
        #expect(bound == .seconds(15))
        guard case .awaitJoin(starting: false, _) = machine.closeStep(now: at(2_000), assignmentLost: false) else {
            Issue.record("expected to keep waiting")
            return
        }
        _ = machine.assigned([jobs0], cooperative: true, now: at(3_000))
        let late = machine.take(jobs0, offset: 0)
        #expect(late == nil, "records of the new assignment are the next owner's")
        guard case .drain(let actions, nil, let joinWait) = machine.closeStep(now: at(3_000), assignmentLost: false) else {
            Issue.record("expected the drain")
            return
        }
        #expect(joinWait == .init(waited: .seconds(3), completed: true))
        #expect(names(actions) == ["pause(1)"])
        guard case .leave(let last, 0) = machine.closeStep(now: at(3_010), assignmentLost: false) else {
            Issue.record("expected to leave")
            return
        }
        #expect(last.isEmpty)
    }

    @Test func aFatalErrorClosesAtOnceAndCommitsNothing() throws {
        var machine = machine()
        _ = machine.assigned([jobs0], cooperative: true, now: at(0))
        let id = try take(&machine, jobs0, 0...0)[0]
        _ = machine.start(id)
        machine.complete(id, weight: 1)
        machine.fail(now: at(10))
        guard case .close = machine.tick(.init(now: at(10))) else {
            Issue.record("expected the close")
            return
        }
        _ = machine.closeStep(now: at(10), assignmentLost: false)
        guard case .leave(let actions, 0) = machine.closeStep(now: at(10), assignmentLost: false) else {
            Issue.record("expected to leave")
            return
        }
        #expect(names(actions) == ["store(jobs[0]@1)"], "stored, never committed")
    }
}

/// Short names of actions, for readable expectations.
private func names(_ actions: [ConsumerAction]) -> [String] {
    func offsets(_ list: [(TopicPartition, Int64)]) -> String {
        list.map { "\($0.0.topic)[\($0.0.partition)]@\($0.1)" }.sorted().joined(separator: ",")
    }
    return actions.map { action in
        switch action {
        case .setFetchPaused(let paused, let partitions, let lane):
            "\(paused ? "pause" : "resume")(\(partitions.count)\(lane.map { ", \($0)" } ?? ""))"
        case .storeOffsets(let list): "store(\(offsets(list)))"
        case .commit(let list, let wait): "\(wait ? "commitNow" : "commit")(\(offsets(list)))"
        case .rejoin(let pendingFor, let rejoins): "rejoin(\(pendingFor.milliseconds) ms, \(rejoins))"
        case .assign(let list, let incremental): "assign(\(list.count), \(incremental ? "incremental" : "eager"))"
        case .routeToBulkQueue(let list): "route(\(list.map { "\($0.topic)[\($0.partition)]" }.joined(separator: ",")))"
        case .unassign(let list, let incremental): "unassign(\(list.count), \(incremental ? "incremental" : "eager"))"
        case .notifyRevoke(let notice): "notify(\(notice.stage))"
        case .announceAssigned(let list): "announceAssigned(\(list.count))"
        case .announceRevoked(let list): "announceRevoked(\(list.count))"
        }
    }
}
