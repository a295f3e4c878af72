import PushlineAPNSCore

/// What every record of one job shares, made once per job and kept by its `JobProgress`.
struct JobRecordsContext: Sendable {
    var template: DeliveryRecordTemplate
    var appMetrics: WorkerMetrics.AppMetrics
    /// When the job's record reached the pipeline (end-to-end latency runs from here).
    var received: MonotonicInstant
}
