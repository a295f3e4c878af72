import PushlineAPNSCore

extension Job {
    /// A job's fields (`Job` reads them through its box).
    struct Contents: Sendable, Hashable {
        var id: String
        var deviceTokens: APNSDeviceTokens
        var channelID: String?
        var app: String
        var topic: String
        var pushType: APNSPushType
        var priority: APNSPriority
        var expiration: Int64?
        var collapseID: String?
        /// The collapse id derived from `id` (`DerivedCollapseID`) when the job has none of its
        /// own, is not a broadcast and duplicates collapse (`worker.collapse_duplicates`); else nil.
        var derivedCollapseID: String?
        var payload: [UInt8]
        var deadlineMilliseconds: Int64?
        /// What every record of the job repeats of it (`campaign`, `meta`).
        var echo: JobEcho
        /// A rehearsal: validated and rendered, nothing sent (`dry_run`, or `worker.dry_run`).
        var dryRun = false
        /// A personalised job's template and variables (`Personalisation`); nil for a plain job.
        var personalisation: Personalisation? = nil
    }

    /// The one allocation a job's copies share; immutable.
    final class Box: Sendable {
        let contents: Contents

        init(_ contents: Contents) {
            self.contents = contents
        }
    }
}
