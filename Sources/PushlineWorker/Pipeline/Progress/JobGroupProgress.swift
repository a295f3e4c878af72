import PushlineAPNS
import PushlineAPNSCore
import PushlineKafka
import Synchronization

/// A group of single-token device-token jobs from one intake run, of one app and lane: one object
/// for all of them, where each job would cost a `JobProgress` (and its tally and locks).
///
/// It hears each member's outcome from the APNs client (member `i` is the observer's index `i`),
/// and it is the Kafka delivery of every record its members publish. It counts two
/// acknowledgements per member (its token's records, then its `job_done`), and once it has them
/// all it completes the members' records together (`JobRelease.groupEnded`: one consumer lock,
/// one release of the in-flight gate). A member whose request is abandoned (shutdown, or a revoke
/// withdrew it) publishes nothing and is given up at once; an answered member waits for its group
/// (see docs/kafka.md on what that means for a revoke's drain).
///
/// Explicitly synchronised (`@unchecked Sendable`): every stored property is immutable, atomic or
/// under a mutex. Called from the event loops (outcomes, abandonments) and the producer's poll
/// thread or the retry loop (acknowledgements); it hands outcomes to `JobResults` and its end to
/// `JobRelease`, and calls the publisher only as its records' delivery (`ResultDelivery`).
final class JobGroupProgress: ResultDelivery, APNSBatchObserver, @unchecked Sendable {
    let members: [JobGroupMember]
    /// The members' `apns-id`s: member `i`'s request has id `i`.
    let requestIDs: APNSIDBlock
    let lane: SendLane
    let laneMetrics: WorkerMetrics.LaneMetrics
    let appMetrics: WorkerMetrics.AppMetrics
    /// The members' app's part of the in-flight window; nil in a worker with one app.
    let load: AppLoad?
    /// When the run's records reached the pipeline (end-to-end latency runs from here).
    let received: MonotonicInstant
    /// Acknowledgements still to come: two per member (or their absence, for an abandoned one).
    private let remaining: Atomic<Int>
    /// The members given up, by index (usually none).
    private let abandoned = Mutex<[Int]>([])
    /// Where the members' outcomes go (downstream: it publishes their records).
    private let results: JobResults

    init(
        members: [JobGroupMember],
        requestIDs: APNSIDBlock,
        lane: SendLane,
        laneMetrics: WorkerMetrics.LaneMetrics,
        appMetrics: WorkerMetrics.AppMetrics,
        load: AppLoad? = nil,
        received: MonotonicInstant,
        results: JobResults
    ) {
        precondition(!members.isEmpty && requestIDs.count == members.count)
        self.members = members
        self.requestIDs = requestIDs
        self.lane = lane
        self.laneMetrics = laneMetrics
        self.appMetrics = appMetrics
        self.load = load
        self.received = received
        self.remaining = Atomic(2 * members.count)
        self.results = results
        super.init(publisher: results.publisher, topic: results.topics.results.name)
    }

    /// Member `index`'s token has its final outcome (the APNs client calls this).
    func notificationEnded(_ index: Int, outcome: APNSOutcome) {
        results.memberEnded(self, index: index, outcome: outcome)
    }

    /// Member `index`'s job: a cancel picks the group's members one by one.
    func cancelKey(_ index: Int) -> APNSCancelKey? {
        members.indices.contains(index) ? members[index].job.cancelKey : nil
    }

    /// Member `index` gets no record here (its pool shut down first, or a revoke withdrew its
    /// request): its record is given up now, and the group no longer waits for it. A held app's
    /// member withdrawn in a revoke is parked instead, as a job of its own would be
    /// (`JobRelease.memberParked`): its record is completed once its copy is in Kafka.
    func memberAbandoned(_ index: Int, withdrawn: Bool = false) {
        abandoned.withLock { $0.append(index) }
        if withdrawn, load?.isHeld == true, let copy = members[index].parkingCopy, results.release.parker != nil {
            results.release.memberParked(members[index], copy: copy, lane: lane, app: load)
        } else {
            results.release.memberAbandoned(members[index].id, lane: lane, app: load)
        }
        countDown(2)
    }

    /// Kafka has a member's token records or its `job_done`.
    override func acknowledged() {
        countDown(1)
    }

    private func countDown(_ count: Int) {
        guard remaining.wrappingSubtract(count, ordering: .acquiringAndReleasing).newValue == 0 else { return }
        results.release.groupEnded(self, abandoned: abandoned.withLock { $0 })
    }
}
