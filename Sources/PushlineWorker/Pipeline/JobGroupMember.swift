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
    /// The job's records' key (the job id's bytes) and its delivery record's shared part.
    let key: [UInt8]
    let template: DeliveryRecordTemplate
    /// The `apns-id` of the job's one request.
    let requestID: APNSIDBlock
}
