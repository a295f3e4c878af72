import PushlineAPNS
import PushlineAPNSCore
import PushlineKafka

/// Single-token jobs, in groups (`JobGroupProgress`): one progress object, one consumer lock and
/// one release of the in-flight gate per group of up to `JobGroupDraft.capacity` jobs (their
/// records: JobResults+Groups.swift; their release: `JobRelease.groupEnded`).
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
            load: appLoads[draft.app],
            received: received,
            results: results
        )
        for submission in draft.submissions(ids: group.requestIDs, observer: group) {
            pending.add(submission, app: draft.app)
        }
    }
}
