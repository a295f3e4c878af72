import PushlineAPNSCore
import Synchronization

/// The counts of one job's end, and its tally for `job_done`: what `JobProgress` keeps. Each
/// event returns what happened, as a value; the caller acts on it (nothing is called from here).
///
/// Explicitly synchronised: atomics and one mutex, so its events may come from any thread at
/// once. They come from the event loops (`tokenFinal`, `tokenAbandoned`: the APNs client's
/// outcomes), the thread that ends a run of outcomes (`tokensProduced`, asked by the publisher),
/// and the producer's poll thread or the retry loop (`acknowledged`).
struct JobCountdown: ~Copyable, Sendable {
    /// How a job ended: every record of it in Kafka (`completed`), or a token abandoned, so the
    /// job has no `job_done` and must not be completed (its partition's next owner redoes it).
    enum Ending: Sendable, Equatable {
        case completed
        case abandoned
    }

    /// What follows `tokensProduced`.
    enum AfterTokens: Sendable, Equatable {
        /// The last token's records are produced: the job's `job_done` is due (`summary`).
        case summaryDue
        /// The last token's outcome is known, a token was abandoned, and with no `job_done` to
        /// wait for, the job ended.
        case ended(Ending)
    }

    /// Acknowledgements still to come: one per token, and one for the `job_done` record (or for
    /// its absence, when a token was abandoned).
    private let remaining: Atomic<Int>
    /// Tokens whose outcome (final, or abandoned) is not known yet.
    private let undecided: Atomic<Int>
    /// Tokens abandoned (no final outcome).
    private let abandoned = Atomic<Int>(0)
    /// Tokens abandoned because their requests were withdrawn (a revoke), not shut down.
    private let withdrawn = Atomic<Int>(0)
    /// The withdrawn tokens' indices, in the order withdrawn (`resumable`).
    private let withdrawnIndices = Mutex<[Int]>([])
    private let tokens: Int
    private let tally: Mutex<JobTally>

    /// `carried`: the outcomes of tokens answered before (a resumed job's, `ResumedJob`), which
    /// its `job_done` counts too.
    init(tokens: Int, carried: JobTally? = nil) {
        precondition(tokens > 0)
        remaining = Atomic(tokens + 1)
        undecided = Atomic(tokens)
        self.tokens = tokens
        tally = Mutex(carried ?? JobTally(expected: tokens))
    }

    /// A token's final outcome, before its records are published: counted for `job_done`.
    func tokenFinal(_ outcome: APNSOutcome, answeredAt: Int64) {
        tally.withLock { $0.add(outcome, answeredAt: answeredAt) }
    }

    /// `count` tokens' records are produced (or they have none to produce): nil until the last
    /// token's; then its `job_done` is due, or, when a token was abandoned, the job may end here.
    func tokensProduced(_ count: Int) -> AfterTokens? {
        guard undecided.wrappingSubtract(count, ordering: .acquiringAndReleasing).newValue == 0 else { return nil }
        if abandoned.load(ordering: .acquiring) > 0 {
            // No job_done: its acknowledgement is counted as come.
            return acknowledged().map { .ended($0) }
        }
        return .summaryDue
    }

    /// The job's `job_done`, from the outcomes tallied (once `tokensProduced` says it is due);
    /// `tokens`: the record's tokens, when the job sent only some of them (a resumed job).
    func summary(for job: Job, source: RecordSource, tokens: Int? = nil) -> ResultRecord.JobDone {
        tally.withLock { $0.record(for: job, source: source, tokens: tokens) }
    }

    /// A token that will get no record (its pool shut down first, or its work was withdrawn in a
    /// revoke): its outcome and its acknowledgement are counted as come, and the job will not be
    /// completed. The job's ending, if this ended it.
    func tokenAbandoned(index: Int = 0, withdrawn: Bool = false) -> Ending? {
        if withdrawn {
            withdrawnIndices.withLock { $0.append(index) }
            self.withdrawn.wrappingAdd(1, ordering: .relaxed)
        }
        abandoned.wrappingAdd(1, ordering: .releasing)
        if case .ended(let ending) = tokensProduced(1) {
            // Not expected: the job_done's absence, counted there, comes before this token's own
            // acknowledgement, below.
            return ending
        }
        return acknowledged()
    }

    /// Whether every token was withdrawn, none answered nor shut down (read once the job ended).
    var everyTokenWithdrawn: Bool {
        withdrawn.load(ordering: .acquiring) == tokens
    }

    /// What a job that ended abandoned keeps to do only the rest of its work: the withdrawn
    /// tokens' indices (ascending) and the others' outcomes; nil unless some tokens were answered
    /// and every other was withdrawn (a token shut down, or none answered: the job is done again
    /// whole). Read once the job ended.
    var resumable: (unanswered: [Int], tally: JobTally)? {
        let withdrawn = withdrawn.load(ordering: .acquiring)
        guard withdrawn > 0, withdrawn < tokens, abandoned.load(ordering: .acquiring) == withdrawn else { return nil }
        return (withdrawnIndices.withLock { $0.sorted() }, tally.withLock { $0 })
    }

    /// Kafka has a token's last record, or the job's `job_done` record. The job's ending, if it
    /// was the last acknowledgement.
    func acknowledged() -> Ending? {
        guard remaining.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0 else { return nil }
        return abandoned.load(ordering: .acquiring) > 0 ? .abandoned : .completed
    }
}
