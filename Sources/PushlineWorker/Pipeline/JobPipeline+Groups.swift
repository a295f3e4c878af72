import PushlineAPNS
import PushlineAPNSCore
import PushlineKafka

/// Single-token jobs, in groups (`JobGroupProgress`): one progress object, one consumer lock and
/// one release of the in-flight gate per group of up to `JobGroupDraft.capacity` jobs.
extension JobPipeline {
    /// Makes `draft`'s group, with one block of ids for its members, and adds its request batches
    /// to `pending` (member `i` is the group's observer index `i`, with id `i`).
    func seal(_ draft: JobGroupDraft, lane: SendLane, received: MonotonicInstant, pending: inout PendingSubmissions) {
        let group = JobGroupProgress(
            members: draft.members,
            requestIDs: ids.reserve(draft.members.count),
            lane: lane,
            laneMetrics: metrics.lane(lane),
            appMetrics: appMetrics[draft.app] ?? metrics.app(draft.app),
            received: received,
            pipeline: self
        )
        for submission in draft.submissions(ids: group.requestIDs, observer: group) {
            pending.add(submission, app: draft.app)
        }
    }

    /// Member `index`'s token has its final outcome: its records, then its `job_done`, each
    /// counted by the group when Kafka has it.
    func memberEnded(_ group: JobGroupProgress, index: Int, outcome: APNSOutcome) {
        if Self.isAbandoned(outcome) {
            // As for any job's token (`finish`): nothing is published, and the job is never
            // completed, so its partition's next owner (in the consumer group) sends it again.
            group.memberAbandoned(index)
            return
        }
        // Read in place, through a pointer: passed as a value (even borrowed), the whole member
        // was copied, a retain and a release of each of its fields.
        group.members.withUnsafeBufferPointer {
            memberAnswered($0.baseAddress! + index, index: index, group: group, outcome: outcome)
        }
    }

    private func memberAnswered(
        _ member: UnsafePointer<JobGroupMember>,
        index: Int,
        group: JobGroupProgress,
        outcome: APNSOutcome
    ) {
        // The one copy made here (a value read through a pointer is copied for each use).
        let job = member.pointee.job
        let now = outcomeClocks()
        let records = tokenRecords(
            job: job,
            index: 0,
            outcome: outcome,
            appMetrics: group.appMetrics,
            laneMetrics: group.laneMetrics,
            received: group.received,
            now: now.monotonic,
            run: now.run
        )
        let source = member.pointee.source
        let template = member.pointee.deliveryTemplate(source: source)
        let apnsID = RecordAPNSID.block(group.requestIDs, index: index)
        publish(records, key: job.id, delivery: group, estimate: template.estimate(job: job, index: 0, apnsID: apnsID, outcome: outcome)) {
            template.write(job: job, index: 0, apnsID: apnsID, outcome: outcome, into: &$0)
        }
        // After its token's records (in the same run, or produced already): keyed alike, so it
        // lands after them in the same partition. Its one outcome is written as it is: no tally.
        publisher.publish(
            to: topics.results,
            key: job.id,
            token: group,
            estimate: ResultRecord.JobDone.estimateOne(job: job, outcome: outcome, source: source)
        ) { ResultRecord.JobDone.writeOne(job: job, outcome: outcome, answeredAt: now.wall, source: source, into: &$0) }
    }

    /// Member `index` was abandoned: its record is given up now (its partition's next owner does
    /// it), and its notification leaves the in-flight count.
    func memberAbandoned(_ group: JobGroupProgress, index: Int) {
        recordEnded(group.members[index].id, 1, false)
        gate.jobEnded(notifications: 1, lane: group.lane)
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
        gate.jobEnded(notifications: completed.count, lane: group.lane, jobs: completed.count)
    }
}
