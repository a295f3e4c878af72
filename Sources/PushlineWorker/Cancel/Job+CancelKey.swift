import PushlineAPNS

extension Job {
    /// What a cancel picks this job's requests by in the pools (its campaign and its id): every
    /// observer of a job's requests answers it (`APNSBatchObserver.cancelKey(_:)`).
    var cancelKey: APNSCancelKey { APNSCancelKey(campaign: campaign, job: id) }
}
