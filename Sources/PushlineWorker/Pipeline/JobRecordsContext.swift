import PushlineAPNSCore

/// What every record of one job shares, made once per job and kept by its `JobProgress`.
struct JobRecordsContext: Sendable {
    /// The delivery records' key: the job id's bytes.
    var key: [UInt8]
    var template: DeliveryRecordTemplate
    var appMetrics: WorkerMetrics.AppMetrics
    /// When the job's record reached the pipeline (end-to-end latency runs from here).
    var received: MonotonicInstant
}
