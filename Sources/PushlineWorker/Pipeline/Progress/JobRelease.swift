import PushlineAPNS
import PushlineAPNSCore
import PushlineKafka

/// The commit side of the pipeline: a job's record is released to the consumer (completed, so its
/// offset may be stored, or given up uncompleted) and its notifications leave the in-flight gate,
/// only once Kafka has every result record of the job (at-least-once).
///
/// The one owner of that decision's effects; it holds no state of its own (the counts are each
/// job's progress's, the offsets the consumer's). Called by a job's or a group's progress when
/// its last acknowledgement arrives (the producer's poll thread, the retry loop, or an event loop
/// for a job whose records need no acknowledgement), and by `JobResults` for a rejected record.
final class JobRelease: Sendable {
    /// A job's record is done with, with its weight (notifications): completed (`true`), or given
    /// up uncompleted because its work was withdrawn (`false`), with what it keeps to do only the
    /// rest (`ResumedJob`). Either way it leaves the counts.
    private let recordEnded: @Sendable (_ id: RecordID, _ weight: Int, _ completed: Bool, _ resumable: ResumedJob?) -> Void
    /// Records completed together (a group's), each with its weight: one call, one consumer lock.
    private let recordsCompleted: @Sendable (_ records: [(id: RecordID, weight: Int)]) -> Void
    let gate: InflightGate
    /// With several apps: where a held app's withdrawn jobs (and group members) go instead of
    /// being given up.
    let parker: JobParker?
    private let metrics: WorkerMetrics
    private let wallClockMilliseconds: @Sendable () -> Int64

    init(
        gate: InflightGate,
        metrics: WorkerMetrics,
        wallClockMilliseconds: @escaping @Sendable () -> Int64,
        complete: @escaping @Sendable (RecordID, Int) -> Void,
        completeAll: @escaping @Sendable ([(id: RecordID, weight: Int)]) -> Void,
        abandon: @escaping @Sendable (RecordID, ResumedJob?) -> Void,
        parker: JobParker? = nil
    ) {
        self.gate = gate
        self.parker = parker
        self.metrics = metrics
        self.wallClockMilliseconds = wallClockMilliseconds
        self.recordsCompleted = completeAll
        self.recordEnded = { id, weight, completed, resumable in
            if completed {
                // Uncommitted all along: the consumer counts the weight from here until the commit.
                complete(id, weight)
            } else {
                abandon(id, resumable)
            }
        }
    }

    /// A rejected record's result and dead-letter copy are both in Kafka, or a parked job's copy
    /// is in the deferred topic (`JobParker`): the record is completed.
    func recordReplaced(_ id: RecordID) {
        recordEnded(id, 0, true, nil)
        gate.jobEnded(notifications: 0)
    }

    /// Parks the started records of `records` (element `i` of `started` says whether `records[i]`
    /// started), all jobs, in `lane`: each record is completed once its copy is in Kafka.
    func park(_ records: [DecodedRecord], started: [Bool], lane: SendLane, notBeforeDelay: (String) -> Int64) {
        guard let parker else { preconditionFailure("a worker with one app parks nothing") }
        var jobs = 0
        for index in records.indices where started[index] { jobs += 1 }
        guard jobs > 0 else { return }
        gate.jobsStarted(jobs)
        for index in records.indices where started[index] {
            let decoded = records[index]
            guard case .success(let job) = decoded.job else { preconditionFailure("only jobs are parked") }
            let id = decoded.record.id
            parker.park(
                job,
                value: decoded.original ?? decoded.record.value,
                source: decoded.source ?? RecordSource(id),
                lane: lane,
                notBeforeDelay: notBeforeDelay(job.app)
            ) { [self] in recordReplaced(id) }
        }
    }

    /// A job's last acknowledgement arrived (`JobProgress.Ending`): complete its record, or, when a
    /// token was abandoned, give the record up uncompleted; or, for a held app's job whose every
    /// token was withdrawn in a revoke (`JobProgress.parkable`), park it: its
    /// notifications leave the window now, and its record is completed once the copy is in Kafka,
    /// so the revoke commits past it and the next owner does not send it again.
    func jobEnded(_ progress: JobProgress, done: Bool) {
        let parked = done ? nil : parker.flatMap { parker in progress.parkable.map { (parker, $0) } }
        if done {
            metrics.jobCompleted()
            metrics.laneJobCompleted(
                progress.laneMetrics,
                notifications: progress.weight,
                resultAgeMilliseconds: progress.producedAt.map { wallClockMilliseconds() - $0 }
            )
        }
        if parked == nil { recordEnded(progress.id, progress.weight, done, done ? nil : progress.resumable) }
        // Its notifications leave the count when the job does (its app's part with them): the
        // consumer counts a completed job's weight as uncommitted from here until the commit. A
        // parked job stays among the jobs until its copy is in Kafka (`recordReplaced`).
        gate.jobEnded(notifications: progress.weight, lane: progress.lane, jobs: parked == nil ? 1 : 0, app: progress.shared.load)
        if let (parker, value) = parked {
            let id = progress.id
            parker.park(progress.job, value: value, source: progress.source, lane: progress.lane) { [self] in
                recordReplaced(id)
            }
        }
    }

    /// A group's member was abandoned: its record is given up now (its partition's next owner does
    /// it), and its notification leaves the in-flight count.
    func memberAbandoned(_ id: RecordID, lane: SendLane, app: AppLoad?) {
        recordEnded(id, 1, false, nil)
        gate.jobEnded(notifications: 1, lane: lane, app: app)
    }

    /// A held app's group member was withdrawn in a revoke: it is parked as it was read (`copy`),
    /// its notification leaves the window now, and its record is completed once the copy is in
    /// Kafka (`recordReplaced`), as `jobEnded` does for a job of its own.
    func memberParked(_ member: JobGroupMember, copy: ParkingCopy, lane: SendLane, app: AppLoad?) {
        guard let parker else { preconditionFailure("a worker with one app parks nothing") }
        gate.jobEnded(notifications: 1, lane: lane, jobs: 0, app: app)
        let id = member.id
        parker.park(member.job, value: copy.bytes, source: member.source, lane: lane) { [self] in recordReplaced(id) }
    }

    /// Kafka has every record of the group's members that were not abandoned: their records are
    /// completed in one call, and they leave the in-flight count together.
    func groupEnded(_ group: JobGroupProgress, abandoned: [Int]) {
        var completed: [(id: RecordID, weight: Int)] = []
        completed.reserveCapacity(group.members.count - abandoned.count)
        let now = wallClockMilliseconds()
        // Read in place, two fields each: iterating the members copied each one.
        group.members.withUnsafeBufferPointer { members in
            for index in members.indices where abandoned.isEmpty || !abandoned.contains(index) {
                completed.append((members[index].id, 1))
                if let producedAt = members[index].producedAt {
                    metrics.laneResultAge(group.laneMetrics, milliseconds: now - producedAt)
                }
            }
        }
        guard !completed.isEmpty else { return }
        // Counted once for the group: a counter's update is an atomic add (or a lock) each time.
        metrics.jobsCompleted(completed.count)
        metrics.laneJobCompleted(group.laneMetrics, notifications: completed.count, resultAgeMilliseconds: nil)
        // Uncommitted all along: the consumer counts the weights from here until the commit.
        recordsCompleted(completed)
        gate.jobEnded(notifications: completed.count, lane: group.lane, jobs: completed.count, app: group.load)
    }
}
