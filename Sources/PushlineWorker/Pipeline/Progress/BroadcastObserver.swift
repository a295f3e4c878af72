import PushlineAPNS
import PushlineAPNSCore

/// Hears a broadcast's outcome for its job's progress, with the `apns-request-id` it was sent
/// with; the pool's observer of it, so that a cancel finds its job (`cancelKey(_:)`). One per
/// broadcast job (never per token). Immutable.
final class BroadcastObserver: APNSBatchObserver {
    let progress: JobProgress
    /// Request `i`'s `apns-request-id`.
    let apnsIDs: [String]
    /// Where the outcome goes (it publishes the records).
    private let results: JobResults

    init(progress: JobProgress, apnsIDs: [String], results: JobResults) {
        self.progress = progress
        self.apnsIDs = apnsIDs
        self.results = results
    }

    func notificationEnded(_ index: Int, outcome: APNSOutcome) {
        results.finish(progress, index: index, apnsID: .text(apnsIDs[index]), outcome: outcome)
    }

    func cancelKey(_ index: Int) -> APNSCancelKey? { progress.job.cancelKey }
}
