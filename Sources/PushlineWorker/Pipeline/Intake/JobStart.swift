import PushlineAPNS
import PushlineAPNSCore

/// What a decoded job becomes at its start: one pure decision, from the job and what the intake
/// knows of it (`Context`), made for every job in one place (`JobPipeline.start` acts on it) and
/// tested without I/O (`JobStartTests`).
///
/// Neither the app nor the lane is an input: every app and both lanes take the same way (a
/// single-token job joins its app's group whatever the number of apps; an urgent run of one makes
/// no group because it is a run of one).
enum JobStart: Sendable, Hashable {
    /// Ends at once, every recipient with this reason and no request: past its deadline
    /// (`expired`, which wins), its campaign or id cancelled (`cancelled`), or a rehearsal of a
    /// job that needs no rendering (`dryRun`).
    case unsent(APNSOutcome.NoResponse)
    /// A single-token job of a run of several: it joins its app's group (`JobGroupProgress`), no
    /// progress of its own.
    case joinsGroup
    /// A personalised job: every token's payload is rendered first; a rehearsal's tokens end
    /// `dry_run` once rendered (an unrenderable token ends with its own reason either way).
    case personalised(dryRun: Bool)
    /// A broadcast to its channel: one request.
    case broadcast
    /// A request batch of its own, with its own progress: several tokens, a job resumed after a
    /// lost assignment (its progress carries what was done), or the only job of its run.
    case ownBatch

    /// What the intake knows of a job at its start, besides the job itself.
    struct Context: Sendable, Hashable {
        /// Whether its deadline (`deadline_ms`) has passed.
        var expired = false
        /// Whether its campaign or id is cancelled (`Cancellations`, checked by the intake).
        var cancelled = false
        /// Whether its run has more than one record (a run of one makes no group: a group of one
        /// would cost more objects, not fewer).
        var runMakesGroups = true
        /// Whether it resumes an earlier run given up with part of it done (`ResumedJob`).
        var resumed = false
    }

    /// The decision for `job` in `context`.
    static func decide(_ job: Job, _ context: Context) -> JobStart {
        if context.expired { return .unsent(.expired) }
        if context.cancelled { return .unsent(.cancelled) }
        if job.channelID != nil { return job.dryRun ? .unsent(.dryRun) : .broadcast }
        if job.isPersonalised { return .personalised(dryRun: job.dryRun) }
        if job.dryRun { return .unsent(.dryRun) }
        if job.recipientCount == 1, context.runMakesGroups, !context.resumed { return .joinsGroup }
        return .ownBatch
    }
}
