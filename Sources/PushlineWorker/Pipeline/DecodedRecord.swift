import PushlineKafka

/// A consumed job record, decoded (a pure step) before it is started: the intake decodes a run
/// of records, starts them under one lock, and hands the started ones to the pipeline together.
struct DecodedRecord: Sendable {
    let record: KafkaRecord
    let job: Result<Job, JobRejection>
    /// Where the job was first read, when that was not `record` (a parked job brought back from
    /// the deferred topic); nil: `record` itself.
    var source: RecordSource? = nil
    /// The job record's bytes as its sender wrote them, for a parked copy (`JobParker`); nil when
    /// the consumer's reader did not keep them (then `record` has them, or none are needed).
    var original: [UInt8]? = nil

    /// The notifications it will put in flight (none for a rejected record).
    var weight: Int {
        switch job {
        case .success(let job): job.recipientCount
        case .failure: 0
        }
    }
}
