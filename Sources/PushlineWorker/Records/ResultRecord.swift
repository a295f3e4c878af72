import PushlineAPNSCore

/// The records Pushline publishes (contract: "Records on results_topic").
public enum ResultRecord: Sendable, Hashable {
    /// The final outcome for one token, or for one broadcast.
    case delivery(Delivery)
    /// APNs says a token is dead (410); token-hygiene services delete it.
    case tokenInvalidated(TokenInvalidated)
    /// APNs says a broadcast channel does not exist (ChannelNotRegistered); whoever stores
    /// channel ids deletes it.
    case channelGone(ChannelGone)
    /// A job that could not be decoded or validated.
    case rejected(Rejected)
    /// Every token (the broadcast) of a job has its final outcome: the job's summary.
    case jobDone(JobDone)

    public struct Delivery: Sendable, Hashable {
        /// What a delivery record is about: a device token (`token`), or a broadcast's channel
        /// (`channel_id` in its place).
        public enum Recipient: Sendable, Hashable {
            case token(String)
            case channel(String)
            /// Token `index` of a job's token bytes: what the pipeline records, with no `String`
            /// per token. Equal to (and hashed like) `.token` of the same text.
            case deviceToken(APNSDeviceTokens, index: Int)

            /// The token or the channel id.
            public var value: String {
                switch self {
                case .token(let token): token
                case .channel(let channelID): channelID
                case .deviceToken(let tokens, let index): tokens.token(at: index)
                }
            }

            public var isChannel: Bool {
                if case .channel = self { true } else { false }
            }

            public static func == (lhs: Recipient, rhs: Recipient) -> Bool {
                lhs.isChannel == rhs.isChannel && lhs.value == rhs.value
            }

            public func hash(into hasher: inout Hasher) {
                hasher.combine(isChannel)
                hasher.combine(value)
            }
        }

        public var jobID: String
        public var recipient: Recipient
        public var app: String
        /// APNs' HTTP status; 0 when no response was ever received.
        public var status: Int
        /// APNs' reason, or `timeout` / `connection` / `expired` / `protocol_error` with status 0; nil on success.
        public var reason: String?
        /// The request's `apns-id` (APNs' own when it answered with another); nil when it was
        /// never sent.
        public var apnsID: String? {
            get { recordAPNSID?.text }
            set { recordAPNSID = newValue.map { .text($0) } }
        }
        /// What `apnsID` is made from (the pipeline's: without a string per token).
        var recordAPNSID: RecordAPNSID?
        /// The `apns-unique-id` APNs answers with in its development environment (and on
        /// broadcasts); nil when absent.
        public var apnsUniqueID: String?
        /// APNs' 410 timestamp (ms).
        public var timestamp: Int64?
        public var attempts: Int
        public var latencyMilliseconds: Double
        public var final: Bool
        /// How long the notification waited in a systemic hold of its app (`held_ms`); nil when
        /// it never did.
        public var heldMilliseconds: Double?
        public var source: RecordSource
        /// What the record echoes of its job (`campaign`, `meta`).
        public var echo: JobEcho

        public init(
            jobID: String,
            recipient: Recipient,
            app: String,
            status: Int,
            reason: String?,
            apnsID: String?,
            apnsUniqueID: String? = nil,
            timestamp: Int64?,
            attempts: Int,
            latencyMilliseconds: Double,
            final: Bool = true,
            heldMilliseconds: Double? = nil,
            source: RecordSource,
            echo: JobEcho = .none
        ) {
            self.jobID = jobID
            self.recipient = recipient
            self.app = app
            self.status = status
            self.reason = reason
            self.recordAPNSID = apnsID.map { .text($0) }
            self.apnsUniqueID = apnsUniqueID
            self.timestamp = timestamp
            self.attempts = attempts
            self.latencyMilliseconds = latencyMilliseconds
            self.final = final
            self.heldMilliseconds = heldMilliseconds
            self.source = source
            self.echo = echo
        }
    }

    public struct TokenInvalidated: Sendable, Hashable {
        public var token: String
        public var app: String
        public var topic: String
        /// Apple's reason, verbatim: `Unregistered` or `ExpiredToken`.
        public var reason: String
        public var invalidSince: Int64?
        public var jobID: String
        /// The APNs environment that said so: `production`, `sandbox` or `custom` (a HOST:PORT
        /// endpoint). A token is valid in one environment only, so a hygiene service deletes it
        /// from that environment's list.
        public var environment: String
        /// What the record echoes of its job (`campaign`, `meta`).
        public var echo: JobEcho

        public init(
            token: String,
            app: String,
            topic: String,
            reason: String,
            invalidSince: Int64?,
            jobID: String,
            environment: String,
            echo: JobEcho = .none
        ) {
            self.token = token
            self.app = app
            self.topic = topic
            self.reason = reason
            self.invalidSince = invalidSince
            self.jobID = jobID
            self.environment = environment
            self.echo = echo
        }
    }

    public struct ChannelGone: Sendable, Hashable {
        public var channelID: String
        public var app: String
        /// Apple's reason, verbatim (`ChannelNotRegistered`).
        public var reason: String
        public var jobID: String
        /// What the record echoes of its job (`campaign`, `meta`).
        public var echo: JobEcho

        public init(channelID: String, app: String, reason: String, jobID: String, echo: JobEcho = .none) {
            self.channelID = channelID
            self.app = app
            self.reason = reason
            self.jobID = jobID
            self.echo = echo
        }
    }

    public struct Rejected: Sendable, Hashable {
        public var jobID: String?
        public var error: String
        public var source: RecordSource
        /// What the record echoes of its job, as far as it could be read (`JobRejection.echo`).
        public var echo: JobEcho

        public init(jobID: String?, error: String, source: RecordSource, echo: JobEcho = .none) {
            self.jobID = jobID
            self.error = error
            self.source = source
            self.echo = echo
        }
    }

    /// The Kafka key: the job id for delivery, job_done and rejected records, the token for
    /// invalidations, the channel id for a channel gone.
    public var key: String? {
        switch self {
        case .delivery(let delivery): return delivery.jobID
        case .tokenInvalidated(let invalidated): return invalidated.token
        case .channelGone(let gone): return gone.channelID
        case .rejected(let rejected): return rejected.jobID
        case .jobDone(let done): return done.jobID
        }
    }

    /// The record as UTF-8 JSON, fields in the contract's order, what it echoes of its job last
    /// (`JobEcho`: `campaign`, then `meta`, the last member).
    public func encoded() -> [UInt8] {
        var json = JSONWriter()
        switch self {
        case .delivery(let d):
            return DeliveryRecordTemplate(
                jobID: d.jobID,
                app: d.app,
                source: d.source,
                broadcast: d.recipient.isChannel,
                echo: d.echo,
                records: 1
            )
            .encode(d)
        case .jobDone(let done):
            return done.encoded()
        case .channelGone(let g):
            json.raw("{\"type\":\"channel_gone\",")
            json.key("channel_id")
            json.string(g.channelID)
            json.raw(",")
            json.key("app")
            json.string(g.app)
            json.raw(",")
            json.key("reason")
            json.string(g.reason)
            json.raw(",")
            json.key("job_id")
            json.string(g.jobID)
            g.echo.write(into: &json)
            json.raw("}")
        case .tokenInvalidated(let t):
            json.raw("{\"type\":\"token_invalidated\",")
            json.key("token")
            json.string(t.token)
            json.raw(",")
            json.key("app")
            json.string(t.app)
            json.raw(",")
            json.key("topic")
            json.string(t.topic)
            json.raw(",")
            json.key("reason")
            json.string(t.reason)
            json.raw(",")
            json.key("invalid_since")
            json.optionalInteger(t.invalidSince)
            json.raw(",")
            json.key("job_id")
            json.string(t.jobID)
            json.raw(",")
            json.key("environment")
            json.string(t.environment)
            t.echo.write(into: &json)
            json.raw("}")
        case .rejected(let r):
            json.raw("{\"type\":\"rejected\",")
            json.key("job_id")
            json.optionalString(r.jobID)
            json.raw(",")
            json.key("error")
            json.string(r.error)
            json.raw(",")
            json.key("source")
            Self.write(r.source, into: &json)
            r.echo.write(into: &json)
            json.raw("}")
        }
        return json.bytes
    }

    static func write(_ source: RecordSource, into json: inout JSONWriter) {
        json.raw("{\"topic\":")
        json.string(source.topic)
        json.raw(",\"partition\":")
        json.integer(source.partition)
        json.raw(",\"offset\":")
        json.integer(source.offset)
        json.raw("}")
    }
}
