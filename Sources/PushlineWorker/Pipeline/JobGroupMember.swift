import PushlineAPNSCore
import PushlineKafka

/// One single-token job of a `JobGroupProgress`: what its records need once its token's outcome
/// is known, and what its end reports.
struct JobGroupMember: Sendable {
    let id: RecordID
    let job: Job
    let source: RecordSource
    /// When the job's record was produced (Kafka timestamp, wall-clock milliseconds), if known.
    let producedAt: Int64?
    /// Its delivery record's shared part (the records' key is the job id: `job.id`).
    let template: DeliveryRecordTemplate
    /// The `apns-id` of the job's one request.
    let requestID: APNSIDBlock
}
