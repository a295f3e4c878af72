/// Everything `pushline run` is configured with: the YAML file of the contract, overridden key by
/// key from the environment, validated whole before anything starts.
///
/// The stored properties' initial values are the defaults. Every key's name, variable, rule and
/// documentation is in `ConfigurationKeys`, which points at these properties.
public struct PushlineConfiguration: Sendable, Hashable {
    public var kafka: Kafka
    public var apns: APNS
    /// App profiles by name; a job picks one with `app` ("default" when absent).
    public var apps: [String: App]
    public var worker: Worker
    public var metrics: Metrics
    public var log: Log

    public init(
        kafka: Kafka = Kafka(),
        apns: APNS = APNS(),
        apps: [String: App] = [:],
        worker: Worker = Worker(),
        metrics: Metrics = Metrics(),
        log: Log = Log()
    ) {
        self.kafka = kafka
        self.apns = apns
        self.apps = apps
        self.worker = worker
        self.metrics = metrics
        self.log = log
    }

    public struct Kafka: Sendable, Hashable {
        public var brokers = "127.0.0.1:9092"
        public var groupID = "pushline"
        public var jobsTopic = "push.jobs"
        /// The urgent lane ("" = none): its jobs go before `jobsTopic`'s at every stage.
        public var urgentJobsTopic = ""
        public var resultsTopic = "push.results"
        /// "" = token_invalidated events go to `resultsTopic` only.
        public var invalidationsTopic = ""
        public var deadLetterTopic = "push.jobs.dlq"
        /// Where the jobs of an app that is held, paced or slow at its share wait, so that they
        /// never stop other apps; "" = `<jobs_topic>.deferred`. Used with more than one app.
        public var deferredTopic = ""
        /// The compacted topic of cancel records (`pushline cancel`), read whole by every worker
        /// outside the consumer group; "" = `<jobs_topic>.control`.
        public var controlTopic = ""
        /// Guards for brokers that mishandle classic join rounds (the embedded broker, Tansu):
        /// wait for a pending round before leaving, and abandon a join never answered. Apache
        /// Kafka needs neither (docs/kafka.md, "Broker guards").
        public var guardJoinRounds = false
        /// Passed to librdkafka as-is (security.protocol, sasl.*, ssl.*, ...).
        public var properties: [String: String] = [:]
        public init() {}

        /// The deferred topic's name: `deferredTopic`, or `<jobs_topic>.deferred`.
        public var deferredTopicName: String {
            deferredTopic.isEmpty ? jobsTopic + ".deferred" : deferredTopic
        }

        /// The control topic's name: `controlTopic`, or `<jobs_topic>.control`.
        public var controlTopicName: String {
            controlTopic.isEmpty ? jobsTopic + ".control" : controlTopic
        }

        /// The topics the worker's consumer subscribes to: the jobs topic, and the urgent lane's.
        public var consumedTopics: [String] {
            urgentJobsTopic.isEmpty ? [jobsTopic] : [jobsTopic, urgentJobsTopic]
        }
    }

    public struct APNS: Sendable, Hashable {
        /// production | sandbox | HOST:PORT
        public var endpoint = "production"
        /// Extra trusted CA (PEM), required for a HOST:PORT endpoint.
        public var caFile = ""
        public var connections = 4
        /// At start, the first connection opens at once and each next one this long after.
        public var connectSpacingMilliseconds = 1000
        public var maxStreamsPerConnection = 1000
        public var requestTimeoutMilliseconds = 10_000
        /// How long a PING may go unanswered before its connection is replaced.
        public var pingTimeoutMilliseconds = 10_000
        public var maxAttempts = 5
        /// Broadcast channel management: production | sandbox (Apple's `api-manage-broadcast`
        /// hosts) | HOST:PORT; "" = the channel hosts of each app's push environment.
        public var channelsEndpoint = ""
        /// `http://[user@]host:port` to tunnel APNs connections through (HTTP CONNECT); "" = direct.
        public var proxy = ""
        /// The name of the variable holding the proxy user's password; "" = none.
        public var proxyPasswordEnvironmentVariable = ""
        /// Systemic answers in the last 2 s before an app may be held (docs/apns.md, "Systemic faults").
        public var holdMinimumSystemic = 10
        /// The percentage of systemic answers in the last 2 s that holds the app.
        public var holdPercent = 50
        /// How long one notification may wait in a hold before it is finalized with the last
        /// systemic answer and `held_ms`.
        public var holdLimitMilliseconds = 900_000
        public init() {}
    }

    /// One app profile, as the keys under `apps.NAME` spell it; `auth` is the form they make.
    public struct App: Sendable, Hashable {
        public var bundleID = ""
        /// Per-app override of `apns.endpoint`; "" = use it.
        public var endpoint = ""
        /// Per-app override of `apns.channels_endpoint`; "" = use it.
        public var channelsEndpoint = ""
        /// Per-app override of `apns.proxy`; "" = use it.
        public var proxy = ""
        /// Pacing: notifications per second for this app; 0 = as fast as APNs allows.
        public var maxRate = 0
        /// token | certificate
        public var authType = "token"
        public var keyFile = ""
        public var keyID = ""
        public var teamID = ""
        public var certFile = ""
        public var p12File = ""
        /// The name of the variable holding the PKCS#12 password; "" = empty password.
        public var p12PasswordEnvironmentVariable = ""
        /// any | sandbox | production: the APNs environment Apple scoped the key (or certificate)
        /// to; a key for one environment cannot be used against the other.
        public var credentialEnvironment = "any"

        public init() {}

        public init(bundleID: String, auth: Auth, endpoint: String = "") {
            self.bundleID = bundleID
            self.endpoint = endpoint
            switch auth {
            case .token(let keyFile, let keyID, let teamID):
                self.authType = "token"
                self.keyFile = keyFile
                self.keyID = keyID
                self.teamID = teamID
            case .certificatePEM(let certFile, let keyFile):
                self.authType = "certificate"
                self.certFile = certFile
                self.keyFile = keyFile
            case .certificatePKCS12(let p12File, let variable):
                self.authType = "certificate"
                self.p12File = p12File
                self.p12PasswordEnvironmentVariable = variable
            }
        }

        /// The trust form the auth keys select: `certificate` with a `p12_file` is PKCS#12,
        /// without one PEM; anything else is token (validation refuses other types first).
        public var auth: Auth {
            guard authType == "certificate" else {
                return .token(keyFile: keyFile, keyID: keyID, teamID: teamID)
            }
            if p12File.isEmpty {
                return .certificatePEM(certFile: certFile, keyFile: keyFile)
            }
            return .certificatePKCS12(p12File: p12File, passwordEnvironmentVariable: p12PasswordEnvironmentVariable)
        }
    }

    /// How an app proves itself to APNs.
    public enum Auth: Sendable, Hashable {
        /// Token trust: an ES256 JWT from a `.p8` key.
        case token(keyFile: String, keyID: String, teamID: String)
        /// Certificate trust with a PEM certificate and key.
        case certificatePEM(certFile: String, keyFile: String)
        /// Certificate trust with a PKCS#12 bundle; the password comes from the named environment
        /// variable (or is empty when no variable is named).
        case certificatePKCS12(p12File: String, passwordEnvironmentVariable: String)
    }

    public struct Worker: Sendable, Hashable {
        /// Notifications in flight before the assigned partitions are paused.
        public var maxInflight = 20_000
        /// The queue the worker admits, in time at the measured send rate (0: `maxInflight` always).
        public var maxQueueMilliseconds = 1000
        public var shutdownTimeoutMilliseconds = 30_000
        /// APNs reasons that emit `token_invalidated`.
        public var invalidateOn = ["Unregistered"]
        /// Which delivery records are published: `full` (all) or `compact` (all but 2xx).
        public var results = ResultsMode.full.rawValue
        /// Job records larger than this are rejected.
        public var maxJobBytes = 1_000_000
        /// Start even when a `.p8` key is readable by others (not recommended).
        public var allowInsecureKeyFiles = false
        /// A job without a `collapse_id` is sent with one derived from its id, so a redelivered
        /// copy replaces the first on the device (`DerivedCollapseID`).
        public var collapseDuplicates = true
        /// Every job is a dry run (`Job.dryRun`): validated and rendered, nothing sent.
        public var dryRun = false
        /// How long a cancel holds after it was written (its record's timestamp); older cancels
        /// are ignored, and the control topic keeps records this long (`retention.ms`).
        public var cancelRetentionMilliseconds = 604_800_000
        public init() {}
    }

    public struct Metrics: Sendable, Hashable {
        /// HOST:PORT for /metrics, /healthz, /readyz; "" = off.
        public var listen = "127.0.0.1:9464"
        public init() {}
    }

    public struct Log: Sendable, Hashable {
        /// trace | debug | info | notice | warning | error | critical
        public var level = "info"
        /// json | text | auto (text on a terminal, JSON otherwise)
        public var format = "auto"
        public init() {}
    }
}
