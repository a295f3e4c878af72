import PushlineAPNSCore

/// What a job keeps when it ends given up with some tokens answered (their records in Kafka) and
/// the others withdrawn unsent: a revoke gave it up, as when the partition's assignment is lost in
/// a Kafka outage.
///
/// The job's progress hands it to the consumer with the record it gives up
/// (`KafkaConsumer.abandon(_:resumable:)`); the consumer keeps it only when the assignment was
/// lost, and gives it back with the record (`KafkaRecord.resumed`) if the partition returns to
/// this worker unchanged. The job is then sent to its unanswered tokens only (`resuming`), and its
/// `job_done` counts the whole job: the outcomes kept here and those of the rest.
final class ResumedJob: Sendable {
    /// The tokens with no final record yet, as indices into the record's `tokens`, ascending.
    let unanswered: [Int]
    /// The other tokens' final outcomes, for the `job_done`.
    let tally: JobTally
    /// The record's tokens.
    let tokens: Int

    init(unanswered: [Int], tally: JobTally, tokens: Int) {
        self.unanswered = unanswered
        self.tally = tally
        self.tokens = tokens
    }

    /// `job` (decoded from the record fetched again) for its unanswered tokens only; nil when the
    /// record does not match what was kept (then the whole job is done again).
    func resuming(_ job: Job) -> Job? {
        guard job.channelID == nil, job.deviceTokens.count == tokens, let last = unanswered.last, last < tokens else { return nil }
        return job.narrowed(to: unanswered)
    }

    /// What the job keeps when a resumed run of it is given up again: `unanswered` are indices
    /// into the resumed run's tokens, mapped back to the record's.
    func again(unanswered: [Int], tally: JobTally) -> ResumedJob {
        ResumedJob(unanswered: unanswered.map { self.unanswered[$0] }, tally: tally, tokens: tokens)
    }
}
