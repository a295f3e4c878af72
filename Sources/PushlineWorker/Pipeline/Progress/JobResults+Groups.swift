import PushlineAPNS
import PushlineAPNSCore
import PushlineKafka

/// The records of single-token jobs in groups (`JobGroupProgress`): each member's token records,
/// then its `job_done`, in the same run.
extension JobResults {
    /// Member `index`'s token has its final outcome: its records, then its `job_done`, each
    /// counted by the group when Kafka has it.
    func memberEnded(_ group: JobGroupProgress, index: Int, outcome: APNSOutcome) {
        if Self.isAbandoned(outcome) {
            // As for any job's token (`finish`): nothing is published, and the job is never
            // completed, so its partition's next owner (in the consumer group) sends it again.
            group.memberAbandoned(index, withdrawn: outcome.noResponse == .withdrawn)
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
}
