import PushlineKafka

/// A consumed job record, decoded (a pure step) before it is started: the intake decodes a run
/// of records, starts them under one lock, and hands the started ones to the pipeline together.
struct DecodedRecord: Sendable {
    let record: KafkaRecord
    let job: Result<Job, JobRejection>

    /// The notifications it will put in flight (none for a rejected record).
    var weight: Int {
        switch job {
        case .success(let job): job.recipientCount
        case .failure: 0
        }
    }
}
