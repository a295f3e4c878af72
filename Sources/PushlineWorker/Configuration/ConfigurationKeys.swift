/// Every configuration key Pushline reads, in one table: name, type and default (through the
/// property it sets), rule, secrecy and documentation. Adding a key means adding its property to
/// `PushlineConfiguration` (with its default) and one line here; the loader, the validator,
/// `--print-config`, the unknown-key check and the reference in docs/configuration.md follow.
///
/// Two kinds of keys are not in the table because their names are data: the app names under
/// `apps`, and the librdkafka properties under `kafka.properties`.
enum ConfigurationKeys {
    typealias Key = ConfigurationKey<PushlineConfiguration>
    typealias AppKey = ConfigurationKey<PushlineConfiguration.App>

    /// The sections at the top level, in the order they are printed and documented.
    static let sections = ["kafka", "apns", "apps", "worker", "metrics", "log"]

    /// Keys outside `apps`.
    static let global: [Key] = [
        Key(
            "kafka.brokers",
            .string(\.kafka.brokers),
            rule: .nonEmpty(hint: "give host:port[,host:port...]"),
            "bootstrap servers, `host:port[,host:port…]` (librdkafka `bootstrap.servers`)",
            change: "always, outside a laptop"
        ),
        Key(
            "kafka.group_id",
            .string(\.kafka.groupID),
            rule: .nonEmpty(),
            "consumer group; every worker of one deployment uses the same value",
            change: "to run a second, independent deployment on the same topics"
        ),
        Key(
            "kafka.jobs_topic",
            .string(\.kafka.jobsTopic),
            rule: .nonEmpty(),
            "where jobs are read",
            change: "to match your topic names"
        ),
        Key(
            "kafka.urgent_jobs_topic",
            .string(\.kafka.urgentJobsTopic),
            "the urgent lane: jobs here go before `jobs_topic`'s at every stage (same group, same result topics); `\"\"` = none",
            change:
                "to give transactional pushes (codes, messages) a lane no campaign can block ([operations.md](operations.md#transactional-and-bulk-traffic))"
        ),
        Key(
            "kafka.results_topic",
            .string(\.kafka.resultsTopic),
            rule: .nonEmpty(),
            "delivery, `job_done`, `token_invalidated`, `channel_gone` and `rejected` records ([records.md](records.md)); must differ from `jobs_topic`",
            change: "to match your topic names"
        ),
        Key(
            "kafka.invalidations_topic",
            .string(\.kafka.invalidationsTopic),
            "when set, `token_invalidated` records also go here, keyed by token; `\"\"` = results topic only",
            change: "when a token-hygiene service should read only invalidations (a compacted topic works well)"
        ),
        Key(
            "kafka.dead_letter_topic",
            .string(\.kafka.deadLetterTopic),
            rule: .nonEmpty(),
            "byte-for-byte copies of rejected jobs with a `pushline-error` header; must differ from `jobs_topic`",
            change: "to match your topic names"
        ),
        Key(
            "kafka.deferred_topic",
            .string(\.kafka.deferredTopic),
            "with more than one app: where the jobs of an app that is held, paced or slow at its share of the window wait (byte-for-byte copies with `pushline-*` headers), so that they never stop other apps; read back by the group `<group_id>.deferred`; `\"\"` = `<jobs_topic>.deferred` ([kafka.md](kafka.md#apps-kept-apart))",
            change: "to match your topic names; create it with as many partitions as the jobs topic"
        ),
        Key(
            "kafka.control_topic",
            .string(\.kafka.controlTopic),
            "cancel records written by `pushline cancel` (key `campaign:<name>` or `job:<id>`, a tombstone lifts it); every worker reads the whole topic outside the consumer group, from the start at boot, then following it; `\"\"` = `<jobs_topic>.control`; a worker creates it when missing (compacted, `retention.ms` = `worker.cancel_retention_ms`)",
            change: "to match your topic names; one partition is plenty"
        ),
        Key(
            "kafka.guard_join_rounds",
            .boolean(\.kafka.guardJoinRounds),
            "classic group protocol only: a closing worker first waits (at most `session.timeout.ms` + 5 s, 30 s) for a join round it is part of to assign it, and a join left unanswered for 2 × `session.timeout.ms` + the revoke drain is abandoned by cutting the consumer's broker connections; for brokers that park a leaving member's JoinGroup or lose JoinGroup answers (the embedded broker, Tansu). Apache Kafka and librdkafka's mock cluster need neither ([kafka.md](kafka.md#broker-guards))",
            change: "`true` on Tansu (the local stack, tests and bench turn it on); leave it off on Apache Kafka"
        ),

        Key(
            "apns.endpoint",
            .string(\.apns.endpoint),
            rule: .endpoint(optional: false),
            "`production` is api.push.apple.com:443, `sandbox` is api.sandbox.push.apple.com:443; `production:2197` / "
                + "`sandbox:2197` the same on Apple's alternative port (same trust store, environment check and `environment` in "
                + "invalidations); `HOST:PORT` names another server",
            change: "`sandbox` for development builds; `production:2197` where 443 is blocked outbound to Apple; "
                + "`HOST:PORT` for `pushline mock-apns`"
        ),
        Key(
            "apns.channels_endpoint",
            .string(\.apns.channelsEndpoint),
            rule: .endpoint(optional: true),
            "broadcast channel management (`pushline channels`): `production` is api-manage-broadcast.push.apple.com:2196, `sandbox` is api-manage-broadcast.sandbox.push.apple.com:2195, `HOST:PORT` another server; `\"\"` = the channel hosts of each app's push environment (a `HOST:PORT` push endpoint: that same server)",
            change: "rarely: the default follows `endpoint`; to reach Apple's channel hosts through another name"
        ),
        Key(
            "apns.ca_file",
            .string(\.apns.caFile),
            rule: .readableFileOrEmpty,
            "extra trusted CA (PEM), added to the system trust store; required by every `HOST:PORT` endpoint (TLS is never switched off)",
            change: "with a custom endpoint, e.g. the mock's `ca.pem`"
        ),
        Key(
            "apns.connections",
            .integer(\.apns.connections),
            rule: .range(1...64),
            "HTTP/2 connections per app, opened at start and kept open",
            change: "for more throughput per worker ([operations.md](operations.md#tuning))"
        ),
        Key(
            "apns.connect_spacing_ms",
            .integer(\.apns.connectSpacingMilliseconds),
            rule: .range(0...60_000),
            "at start, an app's first connection opens at once and each next one this long after the one before, as Apple "
                + "asks of high-volume providers; each connection resolves the host afresh and goes to the address with the "
                + "fewest of the app's connections (round-robin, a failed address skipped)",
            change: "0 opens them all at once (tests); more for a fleet that restarts all at once"
        ),
        Key(
            "apns.max_streams_per_connection",
            .integer(\.apns.maxStreamsPerConnection),
            rule: .range(1...100_000),
            "cap on concurrent streams per connection; the server's SETTINGS_MAX_CONCURRENT_STREAMS wins when lower",
            change: "lower it to limit load on a test server; raising it above what APNs advertises has no effect"
        ),
        Key(
            "apns.request_timeout_ms",
            .integer(\.apns.requestTimeoutMilliseconds),
            rule: .range(100...600_000),
            "per-attempt deadline; on expiry the stream is reset and the attempt counts as failed",
            change: "raise it for slow custom endpoints"
        ),
        Key(
            "apns.ping_timeout_ms",
            .integer(\.apns.pingTimeoutMilliseconds),
            rule: .range(1000...600_000),
            "how long a connection's PING (one a minute) may go unanswered before the connection is replaced and "
                + "its unanswered requests are sent again on another",
            change: "raise it where the server or the worker's host can stall for seconds (an overloaded test host)"
        ),
        Key(
            "apns.max_attempts",
            .integer(\.apns.maxAttempts),
            rule: .range(1...50),
            "attempts per notification for retryable outcomes, the first one included; answers received while the app is held do not count",
            change: "`1` disables retries"
        ),
        Key(
            "apns.proxy",
            .string(\.apns.proxy),
            rule: .proxyOrEmpty,
            "an HTTP proxy every APNs connection tunnels through (HTTP CONNECT; TLS to Apple stays end to end); `\"\"` = connect directly",
            change: "where egress must go through a proxy"
        ),
        Key(
            "apns.proxy_password_env",
            .string(\.apns.proxyPasswordEnvironmentVariable),
            "the **name** of the environment variable holding the proxy user's password (basic auth); `\"\"` = none",
            change: "for a proxy that wants a password"
        ),
        Key(
            "apns.hold_min_systemic",
            .integer(\.apns.holdMinimumSystemic),
            rule: .range(1...100_000),
            "systemic APNs answers (auth, topic, 5xx, transport) in the last 2 s before the app may be held ([apns.md](apns.md#systemic-faults))",
            change: "raise it to hold only on bigger storms"
        ),
        Key(
            "apns.hold_percent",
            .integer(\.apns.holdPercent),
            rule: .range(1...100),
            "the share of systemic answers in the last 2 s that holds the app, in percent",
            change: "lower it to hold sooner during partial outages"
        ),
        Key(
            "apns.hold_limit_ms",
            .integer(\.apns.holdLimitMilliseconds),
            rule: .range(1000...86_400_000, note: "1 s to 24 h"),
            "how long one notification may wait in a hold before it is finalized with the last systemic answer and `held_ms`",
            change: "lower it when late notifications are worthless; raise it to ride out longer incidents"
        ),

        Key(
            "worker.max_inflight",
            .integer(\.worker.maxInflight),
            rule: .atLeast(1),
            "the most notifications in flight (sent, or waiting for Kafka to acknowledge their results) before the worker pauses its partitions; it resumes at 75%. With several apps, each app's fair share of it: the window over the apps with work that are not held ([kafka.md](kafka.md#apps-kept-apart))",
            change: "[tuning](operations.md#tuning)"
        ),
        Key(
            "worker.max_queue_ms",
            .integer(\.worker.maxQueueMilliseconds),
            rule: .range(0...60_000),
            "work admitted beyond the streams in use, in milliseconds at the measured send rate: the in-flight window adapts to stay near it (never above `max_inflight`); 0 = always `max_inflight`",
            change: "shorter for faster handovers and shutdowns, longer if the rate swings ([scaling](operations.md#scaling))"
        ),
        Key(
            "worker.shutdown_timeout_ms",
            .integer(\.worker.shutdownTimeoutMilliseconds),
            rule: .atLeast(0),
            "how long SIGTERM/SIGINT waits for in-flight work; also caps the rebalance drain at `min(this, 20 s)`",
            change: "keep it below the orchestrator's grace period ([operations.md](operations.md#shutdown))"
        ),
        Key(
            "worker.invalidate_on",
            .strings(\.worker.invalidateOn),
            rule: .tokenGoneReasons,
            "reasons that emit `token_invalidated`; `Unregistered` also covers `ExpiredToken`; from the environment, a comma list",
            change: "see the note below"
        ),
        Key(
            "worker.results",
            .string(\.worker.results),
            rule: .oneOf(ResultsMode.allCases.map(\.rawValue)),
            "`full`: a delivery record per token; `compact`: none for a 2xx (every other delivery, every invalidation and every `job_done` still); the commit waits for what is published either way",
            change:
                "`compact` when only failures, invalidations and per-job summaries matter: far fewer records ([records.md](records.md#results-modes))"
        ),
        Key(
            "worker.max_job_bytes",
            .integer(\.worker.maxJobBytes),
            rule: .atLeast(1024),
            "larger job records are rejected as `record_too_large`",
            change: "to accept larger jobs (mind the broker's `message.max.bytes`)"
        ),
        Key(
            "worker.collapse_duplicates",
            .boolean(\.worker.collapseDuplicates),
            "a job without `collapse_id` is sent with one derived from its `id`, so a redelivered job replaces its first copy on the device instead of showing twice; a job's own `collapse_id` always wins; broadcasts carry none ([records.md](records.md#the-derived-collapse-id))",
            change: "`false` when jobs reuse one `id` for notifications that must all show"
        ),
        Key(
            "worker.dry_run",
            .boolean(\.worker.dryRun),
            "every job is a dry run, as if it said `\"dry_run\": true`: decoded, validated and rendered, and each token ends with `status 0, reason \"dry_run\"` and no request; the APNs pools still start and connect ([records.md](records.md#dry-runs))",
            change: "`true` for a worker that rehearses campaigns, e.g. on a topic of its own"
        ),
        Key(
            "worker.cancel_retention_ms",
            .integer(\.worker.cancelRetentionMilliseconds),
            rule: .range(60_000...31_536_000_000),
            "how long a cancel holds after it was written (its control record's timestamp): older cancels are ignored, and the control topic this worker creates keeps records this long",
            change: "longer when campaigns' jobs may wait in Kafka for more than a week"
        ),
        Key(
            "worker.allow_insecure_key_files",
            .boolean(\.worker.allowInsecureKeyFiles),
            "start even if a `.p8` is readable by group or others",
            change: "see [Secrets](#secrets)"
        ),

        Key(
            "metrics.listen",
            .string(\.metrics.listen),
            rule: .hostPortOrOff,
            "where `/metrics`, `/healthz` and `/readyz` are served (`[v6]:PORT` works); `\"\"` = no HTTP server at all (no probes either)",
            change: "`0.0.0.0:9464` in a container"
        ),

        Key(
            "log.level",
            .string(\.log.level),
            rule: .oneOf(["trace", "debug", "info", "notice", "warning", "error", "critical"]),
            "the lowest level logged",
            change: "`debug` to see connection events"
        ),
        Key(
            "log.format",
            .string(\.log.format),
            rule: .oneOf(["json", "text", "auto"]),
            "`json` is one object per line; `auto` is text when standard error is a terminal, JSON otherwise",
            change: "to force one format"
        ),
    ]

    /// Keys under `apps.NAME`.
    static let app: [AppKey] = [
        AppKey(
            "bundle_id",
            .string(\.bundleID),
            rule: .nonEmpty(),
            "the app's bundle id; default `apns-topic` base. No whitespace or control character (it is sent as a header and in a broadcast's `:path`)",
            change: "always"
        ),
        AppKey(
            "endpoint",
            .string(\.endpoint),
            rule: .endpoint(optional: true),
            "per-app override of `apns.endpoint`; `\"\"` = use `apns.endpoint`",
            change: "e.g. one sandbox app among production apps"
        ),
        AppKey(
            "channels_endpoint",
            .string(\.channelsEndpoint),
            rule: .endpoint(optional: true),
            "per-app override of `apns.channels_endpoint`; `\"\"` = use it",
            change: "rarely; the default follows the app's `endpoint`"
        ),
        AppKey(
            "proxy",
            .string(\.proxy),
            rule: .proxyOrEmpty,
            "per-app override of `apns.proxy`; `\"\"` = use `apns.proxy`",
            change: "when one app's traffic must leave through another proxy"
        ),
        AppKey(
            "max_rate",
            .integer(\.maxRate),
            rule: .range(0...1_000_000),
            "pacing: at most this many notifications per second leave for APNs (retries included; bursts of at most 50 ms of it); with one app, what waits stays in Kafka through the usual backpressure; with several, the app uses at most its share of `worker.max_inflight` and its jobs beyond it wait on `kafka.deferred_topic`, so other apps keep their speed; `0` = as fast as APNs allows",
            change: "to send a campaign at a set rate"
        ),
        AppKey(
            "auth.type",
            .string(\.authType),
            rule: .oneOf(["token", "certificate"]),
            "how the app proves itself to APNs: a token signed with a `.p8` key, or a client certificate",
            change: "certificate trust"
        ),
        AppKey(
            "auth.key_file",
            .string(\.keyFile),
            "token: the `.p8` signing key; certificate (PEM): the certificate's private key",
            change: "always"
        ),
        AppKey(
            "auth.key_id",
            .string(\.keyID),
            "token: the 10-character key id",
            change: "token"
        ),
        AppKey(
            "auth.team_id",
            .string(\.teamID),
            "token: the 10-character team id",
            change: "token"
        ),
        AppKey(
            "auth.cert_file",
            .string(\.certFile),
            "certificate (PEM): the certificate chain",
            change: "certificate, PEM"
        ),
        AppKey(
            "auth.p12_file",
            .string(\.p12File),
            "certificate (PKCS#12): certificate and key in one file",
            change: "certificate, PKCS#12"
        ),
        AppKey(
            "auth.p12_password_env",
            .string(\.p12PasswordEnvironmentVariable),
            "the **name** of the environment variable that holds the PKCS#12 password; `\"\"` = empty password",
            change: "protected `.p12` files"
        ),
        AppKey(
            "auth.environment",
            .string(\.credentialEnvironment),
            rule: .oneOf(["any", "sandbox", "production"]),
            "the APNs environment Apple scoped the key or certificate to (team keys made since February 2025 are Sandbox-only or Production-only); validation refuses one pointed at the other environment",
            change: "when Apple's developer site shows the key or certificate for one environment"
        ),
    ]

    /// Keys of a section that are not in the table: `kafka.properties` (a mapping of librdkafka
    /// properties).
    static let mappings: [String: Set<String>] = ["kafka": ["properties"]]

    /// The table's keys of `section`, without the section prefix (`brokers` for `kafka`).
    static func names(in section: String) -> Set<String> {
        var names = Set(global.filter { $0.section == section }.map(\.nameInSection))
        names.formUnion(mappings[section] ?? [])
        return names
    }
}
