import PushlineAPNSCore

/// What every record of one job shares, made once per job and kept by its `JobProgress`.
struct JobRecordsContext: Sendable {
    var template: DeliveryRecordTemplate
    var appMetrics: WorkerMetrics.AppMetrics
    /// The app's part of the in-flight window; nil in a worker with one app (`AppWindow`).
    var load: AppLoad?
    /// When the job's record reached the pipeline (end-to-end latency runs from here).
    var received: MonotonicInstant
}
