import Foundation
import PushlineAPNS
import PushlineAPNSCore
import PushlineKafka

/// Checks a loaded configuration for values that cannot work, one line per problem: each key by
/// its rule in `ConfigurationKeys`, then the rules that relate keys.
enum ConfigurationValidator {
    static func problems(
        in configuration: PushlineConfiguration,
        kafkaOnly: Bool = false,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> [String] {
        var problems: [String] = []
        func require(_ condition: Bool, _ problem: @autoclosure () -> String) {
            if !condition { problems.append(problem()) }
        }

        // Kafka first: each key by its rule, then the keys against each other, then librdkafka.
        for key in ConfigurationKeys.global where key.section == "kafka" {
            problems += key.problems(in: configuration, absoluteName: key.name)
        }
        let kafka = configuration.kafka
        require(kafka.resultsTopic != kafka.jobsTopic, "kafka.results_topic: '\(kafka.resultsTopic)' is also the jobs topic")
        require(kafka.deadLetterTopic != kafka.jobsTopic, "kafka.dead_letter_topic: '\(kafka.deadLetterTopic)' is also the jobs topic")
        for (name, topic) in [
            ("jobs_topic", kafka.jobsTopic), ("urgent_jobs_topic", kafka.urgentJobsTopic), ("results_topic", kafka.resultsTopic),
            ("dead_letter_topic", kafka.deadLetterTopic), ("invalidations_topic", kafka.invalidationsTopic),
        ] {
            require(kafka.deferredTopicName != topic, "kafka.deferred_topic: '\(kafka.deferredTopicName)' is also the \(name)")
            require(kafka.controlTopicName != topic, "kafka.control_topic: '\(kafka.controlTopicName)' is also the \(name)")
        }
        require(
            kafka.controlTopicName != kafka.deferredTopicName,
            "kafka.control_topic: '\(kafka.controlTopicName)' is also the deferred_topic"
        )
        if !kafka.urgentJobsTopic.isEmpty {
            for (name, topic) in [
                ("jobs_topic", kafka.jobsTopic), ("results_topic", kafka.resultsTopic), ("dead_letter_topic", kafka.deadLetterTopic),
                ("invalidations_topic", kafka.invalidationsTopic),
            ] {
                require(kafka.urgentJobsTopic != topic, "kafka.urgent_jobs_topic: '\(kafka.urgentJobsTopic)' is also the \(name)")
            }
        }
        if problems.isEmpty {
            // librdkafka's own word on kafka.properties, for both clients, before anything connects.
            let consumer = KafkaConsumerConfiguration(
                bootstrapServers: kafka.brokers,
                groupID: kafka.groupID,
                topics: kafka.consumedTopics,
                properties: kafka.properties
            )
            let producer = KafkaProducerConfiguration(
                bootstrapServers: kafka.brokers,
                properties: Worker.producerProperties(kafka.properties)
            )
            let lines = Set(consumer.problems() + producer.problems())
            problems += lines.sorted().map { "kafka.properties.\($0)" }
        }
        if kafkaOnly { return problems }

        for key in ConfigurationKeys.global where key.section != "kafka" {
            problems += key.problems(in: configuration, absoluteName: key.name)
        }
        let apns = configuration.apns
        problems += customEndpointProblems(apns.endpoint, key: "apns.endpoint", caFile: apns.caFile)
        problems += customEndpointProblems(apns.channelsEndpoint, key: "apns.channels_endpoint", caFile: apns.caFile)
        let passwordVariable = apns.proxyPasswordEnvironmentVariable
        if !passwordVariable.isEmpty, environment[passwordVariable] == nil {
            problems.append("apns.proxy_password_env: environment variable \(passwordVariable) is not set")
        }
        require(!configuration.apps.isEmpty, "apps: no app configured; add apps.default with bundle_id and auth")
        for (name, app) in configuration.apps.sorted(by: { $0.key < $1.key }) {
            let prefix = "apps.\(name)"
            for key in ConfigurationKeys.app {
                problems += key.problems(in: app, absoluteName: "\(prefix).\(key.name)")
            }
            problems += bundleIDProblems(app.bundleID, key: "\(prefix).bundle_id")
            problems += customEndpointProblems(app.endpoint, key: "\(prefix).endpoint", caFile: apns.caFile)
            problems += customEndpointProblems(app.channelsEndpoint, key: "\(prefix).channels_endpoint", caFile: apns.caFile)
            problems += environmentProblems(app, prefix: prefix, globalEndpoint: apns.endpoint)
            problems += channelsEnvironmentProblems(configuration, app: name)
            guard ["token", "certificate"].contains(app.authType) else { continue }
            problems += authProblems(app.auth, prefix: prefix, configuration: configuration, environment: environment)
        }
        return problems
    }

    /// What each trust form needs: its keys present, its files readable, secrets not readable by
    /// others, a named password variable set.
    private static func authProblems(
        _ auth: PushlineConfiguration.Auth,
        prefix: String,
        configuration: PushlineConfiguration,
        environment: [String: String]
    ) -> [String] {
        var problems: [String] = []
        let allowInsecure = configuration.worker.allowInsecureKeyFiles
        func secretFile(_ path: String, key: String, ifEmpty hint: String) {
            if path.isEmpty {
                problems.append("\(prefix).\(key): empty; \(hint)")
            } else {
                problems += ConfigurationRule.fileProblems(path, key: "\(prefix).\(key)")
                problems += secretModeProblems(path, key: "\(prefix).\(key)", allowed: allowInsecure)
            }
        }
        switch auth {
        case .token(let keyFile, let keyID, let teamID):
            if keyID.isEmpty { problems.append("\(prefix).auth.key_id: empty") }
            if teamID.isEmpty { problems.append("\(prefix).auth.team_id: empty") }
            secretFile(keyFile, key: "auth.key_file", ifEmpty: "give the .p8 file from Apple")
        case .certificatePEM(let certFile, let keyFile):
            if certFile.isEmpty {
                problems.append("\(prefix).auth.cert_file: empty; give a PEM certificate or p12_file")
            } else {
                problems += ConfigurationRule.fileProblems(certFile, key: "\(prefix).auth.cert_file")
            }
            secretFile(keyFile, key: "auth.key_file", ifEmpty: "give the certificate's PEM key")
        case .certificatePKCS12(let p12File, let variable):
            secretFile(p12File, key: "auth.p12_file", ifEmpty: "give the .p12 bundle")
            if !variable.isEmpty, environment[variable] == nil {
                problems.append("\(prefix).auth.p12_password_env: environment variable \(variable) is not set")
            }
        }
        return problems
    }

    /// A key or certificate scoped to one APNs environment, pointed at the other: APNs would
    /// refuse every request (403), so it is a configuration error. A HOST:PORT endpoint (a mock, a
    /// relay) is not judged.
    private static func environmentProblems(_ app: PushlineConfiguration.App, prefix: String, globalEndpoint: String) -> [String] {
        let scoped = app.credentialEnvironment
        guard scoped == "sandbox" || scoped == "production" else { return [] }
        let (endpoint, key) = app.endpoint.isEmpty ? (globalEndpoint, "apns.endpoint") : (app.endpoint, "\(prefix).endpoint")
        // The environment the records report too (`APNSEndpoint.environment`); a custom endpoint
        // is not judged.
        guard let environment = APNSEndpoint(endpoint)?.environment, environment != "custom", environment != scoped else {
            return []
        }
        return [
            "\(prefix).auth.environment: a \(scoped)-only credential, but \(key) is \(environment); "
                + "APNs refuses it there (use a \(environment) or an any-environment key, or point the app at \(scoped))"
        ]
    }

    /// Channels exist per environment, and an app broadcasts on its push endpoint: a channel
    /// endpoint of the other environment would manage channels the app's broadcasts never find.
    /// `HOST:PORT` on either side is not judged.
    private static func channelsEnvironmentProblems(_ configuration: PushlineConfiguration, app name: String) -> [String] {
        guard let app = configuration.apps[name], let (channels, key) = configuration.channelsEndpoint(app: name),
            key.hasSuffix("channels_endpoint"),
            let push = APNSEndpoint(app.endpoint.isEmpty ? configuration.apns.endpoint : app.endpoint)
        else { return [] }
        guard channels.environment != "custom", push.environment != "custom", channels.environment != push.environment else {
            return []
        }
        return [
            "\(key): \(channels.environment) channels, but apps.\(name) pushes to \(push.environment); "
                + "channels exist per environment (leave it \"\" to follow the app's endpoint)"
        ]
    }

    /// A bundle id becomes the default `apns-topic` of every push and part of the `:path` of every
    /// broadcast and channel request: a value HTTP/2 calls malformed there (RFC 9113 §8.2.1, and
    /// no whitespace at all in a path) would have every such request reset, so it fails at
    /// start-up instead. Apple's bundle ids are letters, digits, '-' and '.'; an empty one is the
    /// key's own rule.
    private static func bundleIDProblems(_ bundleID: String, key: String) -> [String] {
        guard !bundleID.trimmingCharacters(in: .whitespaces).isEmpty else { return [] }
        // Control characters written as escapes, so that the line stays one line.
        let shown = bundleID.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? $0.escaped(asASCII: true) : "\($0)" }.joined()
        if let problem = HTTPFieldValue.problem(bundleID) {
            return ["\(key): '\(shown)' \(problem); it is sent as the apns-topic header, where HTTP/2 forbids that: correct the bundle id"]
        }
        if bundleID.utf8.contains(where: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) {
            return [
                "\(key): '\(shown)' holds whitespace; it is sent in the :path of broadcasts, where HTTP/2 forbids that: correct the bundle id"
            ]
        }
        return []
    }

    /// A HOST:PORT endpoint needs a CA to verify it (TLS is never switched off).
    private static func customEndpointProblems(_ endpoint: String, key: String, caFile: String) -> [String] {
        // Apple's own hosts (`production:2197`, or `api.push.apple.com:2197` written out) are
        // verified by the system trust store.
        guard HostPort(endpoint) != nil, caFile.isEmpty, APNSEndpoint(endpoint)?.isApple != true else { return [] }
        return ["\(key): a custom endpoint ('\(endpoint)') needs apns.ca_file to verify it (TLS is never switched off)"]
    }

    /// A key or certificate bundle readable by group or others is refused unless allowed.
    private static func secretModeProblems(_ path: String, key: String, allowed: Bool) -> [String] {
        guard !allowed, let mode = permissions(path), mode & 0o077 != 0 else { return [] }
        return [
            "\(key): '\(path)' is readable by others (mode \(String(mode, radix: 8))); "
                + "run: chmod 600 '\(path)' (or set worker.allow_insecure_key_files: true)"
        ]
    }

    /// The mode of the file `path` names, following symlinks (a Kubernetes Secret volume mounts
    /// keys as links to 0400 files; the link's own 0777 says nothing).
    private static func permissions(_ path: String) -> Int? {
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        return (try? FileManager.default.attributesOfItem(atPath: resolved)[.posixPermissions] as? Int) ?? nil
    }
}
