import PushlineAPNSCore
import PushlineKafka

/// One single-token job of a `JobGroupProgress`: what its records need once its token's outcome
/// is known, and what its end reports.
///
/// Kept small: a group's members are made, read and destroyed once per job, so every field here
/// is copied and released per job. The record's source is its id's topic, partition and offset,
/// and its delivery record's shared fields are the job's own (`deliveryTemplate(source:)`): both
/// are made when its records are written rather than kept.
/// Its request's `apns-id` is its group's (`JobGroupProgress.requestIDs`, at its index).
struct JobGroupMember: Sendable {
    let id: RecordID
    let job: Job
    /// When the job's record was produced (Kafka timestamp, wall-clock milliseconds), if known.
    let producedAt: Int64?
    /// In a worker with several apps, what the member keeps to be parked (a held app's member
    /// withdrawn in a revoke is parked: `JobGroupProgress.memberAbandoned`), and its first source
    /// when it was read back from the deferred topic; nil in a worker with one app.
    let parkingCopy: ParkingCopy?

    init(id: RecordID, job: Job, producedAt: Int64?, parkingCopy: ParkingCopy? = nil) {
        self.id = id
        self.job = job
        self.producedAt = producedAt
        self.parkingCopy = parkingCopy
    }

    /// Where the job's record came from, as its records name it: its first source when it was
    /// parked and read back, else its record.
    var source: RecordSource { parkingCopy?.firstSource ?? RecordSource(id) }

    /// Its delivery record's shared part, for its one record (the key is the job id: `job.id`);
    /// `source` is the member's, made once by the caller for this record and its `job_done`.
    func deliveryTemplate(source: RecordSource) -> DeliveryRecordTemplate {
        DeliveryRecordTemplate(jobID: job.id, app: job.app, source: source, echo: job.echo, records: 1)
    }
}
