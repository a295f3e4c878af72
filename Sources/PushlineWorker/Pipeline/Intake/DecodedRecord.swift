import PushlineKafka

/// A consumed job record, decoded (a pure step) before it is started: the intake decodes a run
/// of records, starts them under one lock, and hands the started ones to the pipeline together.
struct DecodedRecord: Sendable {
    let record: KafkaRecord
    var job: Result<Job, JobRejection>
    /// Where the job was first read, when that was not `record` (a parked job brought back from
    /// the deferred topic); nil: `record` itself.
    var source: RecordSource? = nil
    /// The job record's bytes as its sender wrote them, for a parked copy (`JobParker`); nil when
    /// the consumer's reader did not keep them (then `record` has them, or none are needed).
    var original: [UInt8]? = nil
    /// What was kept of the job when an earlier run was given up with part of it done, its
    /// partition's assignment lost (`ResumedJob`): `job` then holds the unanswered tokens only.
    var resumed: ResumedJob? = nil

    /// The record's job resumed from `kept` (`KafkaRecord.resumed`): sent to its unanswered
    /// tokens only; unchanged (and done whole) when the record does not match what was kept.
    func resuming(_ kept: ResumedJob) -> DecodedRecord {
        guard case .success(let whole) = job, let rest = kept.resuming(whole) else { return self }
        var resumed = self
        resumed.job = .success(rest)
        resumed.resumed = kept
        // A parked copy keeps the whole record: its next run sends every token.
        return resumed
    }

    /// The notifications it will put in flight (none for a rejected record).
    var weight: Int {
        switch job {
        case .success(let job): job.recipientCount
        case .failure: 0
        }
    }
}
