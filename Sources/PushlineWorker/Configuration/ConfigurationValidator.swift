import PushlineAPNSCore
import Foundation
import PushlineKafka

/// Checks a loaded configuration for values that cannot work, one line per problem.
enum ConfigurationValidator {
    static func problems(
        in configuration: PushlineConfiguration, kafkaOnly: Bool = false,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> [String] {
        var problems: [String] = []
        func require(_ condition: Bool, _ problem: @autoclosure () -> String) {
            if !condition { problems.append(problem()) }
        }

        let kafka = configuration.kafka
        require(!kafka.brokers.trimmingCharacters(in: .whitespaces).isEmpty, "kafka.brokers: empty; give host:port[,host:port...]")
        require(!kafka.groupID.isEmpty, "kafka.group_id: empty")
        require(!kafka.jobsTopic.isEmpty, "kafka.jobs_topic: empty")
        require(!kafka.resultsTopic.isEmpty, "kafka.results_topic: empty")
        require(!kafka.deadLetterTopic.isEmpty, "kafka.dead_letter_topic: empty")
        require(kafka.resultsTopic != kafka.jobsTopic, "kafka.results_topic: '\(kafka.resultsTopic)' is also the jobs topic")
        require(kafka.deadLetterTopic != kafka.jobsTopic, "kafka.dead_letter_topic: '\(kafka.deadLetterTopic)' is also the jobs topic")

        if problems.isEmpty {
            // librdkafka's own word on kafka.properties, for both clients, before anything connects.
            let consumer = KafkaConsumerConfiguration(
                bootstrapServers: kafka.brokers, groupID: kafka.groupID, topics: [kafka.jobsTopic], properties: kafka.properties)
            let producer = KafkaProducerConfiguration(
                bootstrapServers: kafka.brokers, properties: Worker.producerProperties(kafka.properties))
            let lines = Set(consumer.problems() + producer.problems())
            problems += lines.sorted().map { "kafka.properties.\($0)" }
        }
        if kafkaOnly { return problems }

        let apns = configuration.apns
        problems += endpointProblems(apns.endpoint, key: "apns.endpoint", caFile: apns.caFile)
        if !apns.caFile.isEmpty {
            problems += fileProblems(apns.caFile, key: "apns.ca_file")
        }
        require((1...64).contains(apns.connections), "apns.connections: \(apns.connections), must be 1..64")
        require(
            (1...100_000).contains(apns.maxStreamsPerConnection),
            "apns.max_streams_per_connection: \(apns.maxStreamsPerConnection), must be 1..100000")
        require(
            (100...600_000).contains(apns.requestTimeoutMilliseconds),
            "apns.request_timeout_ms: \(apns.requestTimeoutMilliseconds), must be 100..600000")
        require((1...50).contains(apns.maxAttempts), "apns.max_attempts: \(apns.maxAttempts), must be 1..50")
        require(
            (1...100_000).contains(apns.holdMinimumSystemic),
            "apns.hold_min_systemic: \(apns.holdMinimumSystemic), must be 1..100000")
        require((1...100).contains(apns.holdPercent), "apns.hold_percent: \(apns.holdPercent), must be 1..100")
        require(
            (1000...86_400_000).contains(apns.holdLimitMilliseconds),
            "apns.hold_limit_ms: \(apns.holdLimitMilliseconds), must be 1000..86400000 (1 s to 24 h)")

        require(!configuration.apps.isEmpty, "apps: no app configured; add apps.default with bundle_id and auth")
        for (name, app) in configuration.apps.sorted(by: { $0.key < $1.key }) {
            let prefix = "apps.\(name)"
            require(!app.bundleID.isEmpty, "\(prefix).bundle_id: empty")
            if !app.endpoint.isEmpty {
                problems += endpointProblems(app.endpoint, key: "\(prefix).endpoint", caFile: apns.caFile)
            }
            switch app.auth {
            case .token(let keyFile, let keyID, let teamID):
                require(!keyID.isEmpty, "\(prefix).auth.key_id: empty")
                require(!teamID.isEmpty, "\(prefix).auth.team_id: empty")
                if keyFile.isEmpty {
                    problems.append("\(prefix).auth.key_file: empty; give the .p8 file from Apple")
                } else {
                    problems += fileProblems(keyFile, key: "\(prefix).auth.key_file")
                    problems += secretModeProblems(keyFile, key: "\(prefix).auth.key_file", allowed: configuration.worker.allowInsecureKeyFiles)
                }
            case .certificatePEM(let certFile, let keyFile):
                if certFile.isEmpty {
                    problems.append("\(prefix).auth.cert_file: empty; give a PEM certificate or p12_file")
                } else {
                    problems += fileProblems(certFile, key: "\(prefix).auth.cert_file")
                }
                if keyFile.isEmpty {
                    problems.append("\(prefix).auth.key_file: empty; give the certificate's PEM key")
                } else {
                    problems += fileProblems(keyFile, key: "\(prefix).auth.key_file")
                    problems += secretModeProblems(keyFile, key: "\(prefix).auth.key_file", allowed: configuration.worker.allowInsecureKeyFiles)
                }
            case .certificatePKCS12(let p12File, let variable):
                problems += fileProblems(p12File, key: "\(prefix).auth.p12_file")
                problems += secretModeProblems(p12File, key: "\(prefix).auth.p12_file", allowed: configuration.worker.allowInsecureKeyFiles)
                if !variable.isEmpty, environment[variable] == nil {
                    problems.append("\(prefix).auth.p12_password_env: environment variable \(variable) is not set")
                }
            }
        }

        let worker = configuration.worker
        require(worker.maxInflight >= 1, "worker.max_inflight: \(worker.maxInflight), must be at least 1")
        require(worker.shutdownTimeoutMilliseconds >= 0, "worker.shutdown_timeout_ms: \(worker.shutdownTimeoutMilliseconds), must be >= 0")
        require(worker.maxJobBytes >= 1024, "worker.max_job_bytes: \(worker.maxJobBytes), must be at least 1024")
        for reason in worker.invalidateOn where APNSReason(rawValue: reason).documentedStatus != 410 {
            problems.append("worker.invalidate_on: '\(reason)' is not a 410 reason (Unregistered, ExpiredToken); only those mean the token is dead")
        }

        let metrics = configuration.metrics
        if !metrics.listen.isEmpty, HostPort(metrics.listen) == nil {
            problems.append("metrics.listen: '\(metrics.listen)' is not HOST:PORT (or \"\" to turn metrics off)")
        }
        let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
        require(levels.contains(configuration.log.level), "log.level: '\(configuration.log.level)', must be one of \(levels.joined(separator: ", "))")
        require(["json", "text", "auto"].contains(configuration.log.format), "log.format: '\(configuration.log.format)', must be json, text or auto")
        return problems
    }

    private static func endpointProblems(_ endpoint: String, key: String, caFile: String) -> [String] {
        switch endpoint {
        case "production", "sandbox":
            return []
        default:
            guard HostPort(endpoint) != nil else {
                return ["\(key): '\(endpoint)' is not production, sandbox or HOST:PORT"]
            }
            if caFile.isEmpty {
                return ["\(key): a custom endpoint ('\(endpoint)') needs apns.ca_file to verify it (TLS is never switched off)"]
            }
            return []
        }
    }

    /// A key or certificate bundle readable by group or others is refused unless allowed.
    private static func secretModeProblems(_ path: String, key: String, allowed: Bool) -> [String] {
        guard !allowed, let mode = permissions(path), mode & 0o077 != 0 else { return [] }
        return [
            "\(key): '\(path)' is readable by others (mode \(String(mode, radix: 8))); "
                + "run: chmod 600 '\(path)' (or set worker.allow_insecure_key_files: true)"
        ]
    }

    private static func fileProblems(_ path: String, key: String) -> [String] {
        if FileManager.default.isReadableFile(atPath: path) { return [] }
        if FileManager.default.fileExists(atPath: path) { return ["\(key): cannot read '\(path)': permission denied"] }
        return ["\(key): cannot read '\(path)': no such file"]
    }

    /// The mode of the file `path` names, following symlinks (a Kubernetes Secret volume mounts
    /// keys as links to 0400 files; the link's own 0777 says nothing).
    private static func permissions(_ path: String) -> Int? {
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        return (try? FileManager.default.attributesOfItem(atPath: resolved)[.posixPermissions] as? Int) ?? nil
    }
}
