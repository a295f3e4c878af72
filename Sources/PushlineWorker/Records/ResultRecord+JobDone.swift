import PushlineAPNSCore

extension ResultRecord {
    /// A job's summary (`job_done`), published once every token (the broadcast) of the job has its
    /// final outcome and before the job's offset is committed. Never for a rejected job, nor for a
    /// job whose tokens were abandoned (the group's next owner redoes it).
    public struct JobDone: Sendable, Hashable {
        /// What the job went to: how many device tokens, or a broadcast's channel.
        public enum Recipients: Sendable, Hashable {
            case tokens(Int)
            case channel(String)
        }

        /// How many of the job's final outcomes had one status and reason: `"200"` (no reason),
        /// `"410 Unregistered"`, `"0 timeout"`.
        public struct Count: Sendable, Hashable {
            public var status: Int
            public var reason: String?
            public var count: Int

            public init(status: Int, reason: String?, count: Int) {
                self.status = status
                self.reason = reason
                self.count = count
            }

            /// The member name in `counts`: the status, then a space and the reason if any.
            public var name: String {
                reason.map { "\(status) \($0)" } ?? String(status)
            }
        }

        public var jobID: String
        public var app: String
        public var recipients: Recipients
        /// By status, then reason (no reason first).
        public var counts: [Count]
        /// Every token's attempts, summed.
        public var attempts: Int
        /// The longest any notification waited in a systemic hold; nil when none did.
        public var heldMilliseconds: Double?
        /// When the first request of the job was sent (unix ms); nil when none was (every token
        /// expired before its send).
        public var firstSent: Int64?
        /// When the last final outcome came (unix ms).
        public var lastAnswer: Int64
        /// The median and the largest of the tokens' `latency_ms`.
        public var latencyP50Milliseconds: Double
        public var latencyMaxMilliseconds: Double
        public var source: RecordSource
        /// What the record echoes of its job (`campaign`, `meta`).
        public var echo: JobEcho

        public init(
            jobID: String,
            app: String,
            recipients: Recipients,
            counts: [Count],
            attempts: Int,
            heldMilliseconds: Double?,
            firstSent: Int64?,
            lastAnswer: Int64,
            latencyP50Milliseconds: Double,
            latencyMaxMilliseconds: Double,
            source: RecordSource,
            echo: JobEcho = .none
        ) {
            self.jobID = jobID
            self.app = app
            self.recipients = recipients
            self.counts = counts
            self.attempts = attempts
            self.heldMilliseconds = heldMilliseconds
            self.firstSent = firstSent
            self.lastAnswer = lastAnswer
            self.latencyP50Milliseconds = latencyP50Milliseconds
            self.latencyMaxMilliseconds = latencyMaxMilliseconds
            self.source = source
            self.echo = echo
        }

        /// The record as UTF-8 JSON, in the contract's order.
        func encoded() -> [UInt8] {
            // Written in place into the array returned (one allocation) when the estimate holds.
            JSONWriter.encode(estimate: estimate) { json in write(into: &json) }
        }

        /// Room for the keys, the numbers, and the strings unescaped.
        var estimate: Int {
            Self.estimate(jobID: jobID, app: app, source: source, echo: echo)
                + counts.reduce(0) { $0 + Self.estimate($1.reason) }
                + { if case .channel(let id) = recipients { id.utf8.count } else { 0 } }()
        }

        /// Room for the keys, the numbers and the shared strings, without the counts.
        private static func estimate(jobID: String, app: String, source: RecordSource, echo: JobEcho) -> Int {
            320 + jobID.utf8.count + app.utf8.count + source.topic.utf8.count + echo.estimate
        }

        /// Room for one member of `counts`.
        private static func estimate(_ reason: String?) -> Int {
            24 + (reason?.utf8.count ?? 0)
        }

        func write(into json: inout JSONWriter) {
            Self.write(
                jobID: jobID,
                app: app,
                recipients: recipients,
                attempts: attempts,
                heldMilliseconds: heldMilliseconds,
                firstSent: firstSent,
                lastAnswer: lastAnswer,
                latencyP50Milliseconds: latencyP50Milliseconds,
                latencyMaxMilliseconds: latencyMaxMilliseconds,
                source: source,
                echo: echo,
                into: &json
            ) { json in
                for (index, count) in counts.enumerated() {
                    if index > 0 { json.raw(",") }
                    Self.write(count, into: &json)
                }
            }
        }

        /// The `job_done` of a single-token `job` (read from `source`) whose token's final
        /// outcome was `outcome`, answered at `answeredAt` (unix ms): the record a `JobTally` of
        /// that one outcome gives, written with no tally, no counts array and no `JobDone`.
        static func writeOne(
            job: Job,
            outcome: APNSOutcome,
            answeredAt: Int64,
            source: RecordSource,
            into json: inout JSONWriter
        ) {
            let latency = outcome.latencyMilliseconds
            write(
                jobID: job.id,
                app: job.app,
                recipients: .tokens(1),
                attempts: outcome.attempts,
                heldMilliseconds: outcome.heldMilliseconds,
                firstSent: outcome.attempts > 0 ? answeredAt - Int64(latency.rounded()) : nil,
                lastAnswer: answeredAt,
                latencyP50Milliseconds: latency,
                latencyMaxMilliseconds: latency,
                source: source,
                echo: job.echo,
                into: &json
            ) { json in
                write(Count(status: outcome.status, reason: outcome.reasonString, count: 1), into: &json)
            }
        }

        /// Room for a single-token job's `job_done` (`writeOne`).
        static func estimateOne(job: Job, outcome: APNSOutcome, source: RecordSource) -> Int {
            estimate(jobID: job.id, app: job.app, source: source, echo: job.echo) + estimate(outcome.reasonString)
        }

        private static func write(_ count: Count, into json: inout JSONWriter) {
            if count.reason == nil {
                // `count.name` of a bare status, written without making the string.
                json.raw("\"")
                json.integer(count.status)
                json.raw("\":")
            } else {
                json.string(count.name)
                json.raw(":")
            }
            json.integer(count.count)
        }

        private static func write(
            jobID: String,
            app: String,
            recipients: Recipients,
            attempts: Int,
            heldMilliseconds: Double?,
            firstSent: Int64?,
            lastAnswer: Int64,
            latencyP50Milliseconds: Double,
            latencyMaxMilliseconds: Double,
            source: RecordSource,
            echo: JobEcho,
            into json: inout JSONWriter,
            counts: (inout JSONWriter) -> Void
        ) {
            // Each key with its separators is one literal: one copy rather than four calls.
            json.raw("{\"type\":\"job_done\",\"job_id\":")
            json.string(jobID)
            json.raw(",\"app\":")
            json.string(app)
            switch recipients {
            case .tokens(let count):
                json.raw(",\"tokens\":")
                json.integer(count)
            case .channel(let channelID):
                json.raw(",\"channel_id\":")
                json.string(channelID)
            }
            json.raw(",\"counts\":{")
            counts(&json)
            json.raw("},\"attempts\":")
            json.integer(attempts)
            if let heldMilliseconds {
                json.raw(",\"held_ms\":")
                json.tenths(heldMilliseconds)
            }
            json.raw(",\"first_sent\":")
            json.optionalInteger(firstSent)
            json.raw(",\"last_answer\":")
            json.integer(lastAnswer)
            json.raw(",\"latency_ms\":{\"p50\":")
            json.tenths(latencyP50Milliseconds)
            json.raw(",\"max\":")
            json.tenths(latencyMaxMilliseconds)
            json.raw("},\"source\":")
            ResultRecord.write(source, into: &json)
            echo.write(into: &json)
            json.raw("}")
        }
    }
}
