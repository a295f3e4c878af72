import Configuration
import Foundation
import SystemPackage
import Yams

/// Loads `PushlineConfiguration` from the YAML file and the environment, and validates it whole.
///
/// Every key is read through swift-configuration with the environment first and the file second,
/// so `KAFKA_BROKERS` overrides `kafka.brokers` (dots and underscores become `_`, upper case).
/// Keys whose names are data — app names under `apps`, librdkafka properties under
/// `kafka.properties` — are listed from the file (and from `APPS` / `KAFKA_PROPERTY_*` in the
/// environment). Problems are collected, not thrown one at a time: the caller prints them all.
public enum ConfigurationLoader {
    /// Loads and validates. Throws `ConfigurationProblems` listing every problem.
    ///
    /// - Parameter kafkaOnly: validate only what talking to Kafka needs (for `pushline enqueue`,
    ///   which sends no notification and needs no APNs credentials).
    public static func load(
        file: String?,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        kafkaOnly: Bool = false
    ) async throws -> PushlineConfiguration {
        var problems: [String] = []
        var providers: [any ConfigProvider] = [EnvironmentVariablesProvider(environmentVariables: environment)]
        var tree: Node?
        if let file {
            let text: String
            do {
                text = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw ConfigurationProblems(["config: cannot read '\(file)': \(Self.reason(error))"])
            }
            do {
                tree = try Yams.compose(yaml: text)
            } catch {
                throw ConfigurationProblems(["config: '\(file)' is not valid YAML: \(error)"])
            }
            if let tree, tree.mapping == nil {
                throw ConfigurationProblems(["config: '\(file)' must be a YAML mapping at the top level"])
            }
            do {
                providers.append(try await FileProvider<YAMLSnapshot>(filePath: FilePath(file)))
            } catch {
                throw ConfigurationProblems(["config: cannot load '\(file)': \(error)"])
            }
        }
        let reader = ConfigReader(providers: providers)
        var keys = KeyReader(reader: reader)

        if let tree {
            problems += ConfigurationSchema.unknownKeys(in: tree)
        }

        var configuration = PushlineConfiguration()
        configuration.kafka.brokers = keys.string("kafka.brokers", default: configuration.kafka.brokers)
        configuration.kafka.groupID = keys.string("kafka.group_id", default: configuration.kafka.groupID)
        configuration.kafka.jobsTopic = keys.string("kafka.jobs_topic", default: configuration.kafka.jobsTopic)
        configuration.kafka.resultsTopic = keys.string("kafka.results_topic", default: configuration.kafka.resultsTopic)
        configuration.kafka.invalidationsTopic = keys.string(
            "kafka.invalidations_topic", default: configuration.kafka.invalidationsTopic)
        configuration.kafka.deadLetterTopic = keys.string(
            "kafka.dead_letter_topic", default: configuration.kafka.deadLetterTopic)
        configuration.kafka.properties = kafkaProperties(tree: tree, environment: environment, problems: &problems)

        configuration.apns.endpoint = keys.string("apns.endpoint", default: configuration.apns.endpoint)
        configuration.apns.caFile = keys.string("apns.ca_file", default: configuration.apns.caFile)
        configuration.apns.connections = keys.int("apns.connections", default: configuration.apns.connections)
        configuration.apns.maxStreamsPerConnection = keys.int(
            "apns.max_streams_per_connection", default: configuration.apns.maxStreamsPerConnection)
        configuration.apns.requestTimeoutMilliseconds = keys.int(
            "apns.request_timeout_ms", default: configuration.apns.requestTimeoutMilliseconds)
        configuration.apns.maxAttempts = keys.int("apns.max_attempts", default: configuration.apns.maxAttempts)
        configuration.apns.holdMinimumSystemic = keys.int(
            "apns.hold_min_systemic", default: configuration.apns.holdMinimumSystemic)
        configuration.apns.holdPercent = keys.int("apns.hold_percent", default: configuration.apns.holdPercent)
        configuration.apns.holdLimitMilliseconds = keys.int(
            "apns.hold_limit_ms", default: configuration.apns.holdLimitMilliseconds)

        for name in appNames(tree: tree, environment: environment) {
            if let app = readApp(name, keys: &keys) {
                configuration.apps[name] = app
            }
        }

        configuration.worker.maxInflight = keys.int("worker.max_inflight", default: configuration.worker.maxInflight)
        configuration.worker.shutdownTimeoutMilliseconds = keys.int(
            "worker.shutdown_timeout_ms", default: configuration.worker.shutdownTimeoutMilliseconds)
        configuration.worker.invalidateOn = keys.stringArray(
            "worker.invalidate_on", default: configuration.worker.invalidateOn)
        configuration.worker.maxJobBytes = keys.int("worker.max_job_bytes", default: configuration.worker.maxJobBytes)
        configuration.worker.allowInsecureKeyFiles = keys.bool(
            "worker.allow_insecure_key_files", default: configuration.worker.allowInsecureKeyFiles)

        configuration.metrics.listen = keys.string("metrics.listen", default: configuration.metrics.listen)
        configuration.log.level = keys.string("log.level", default: configuration.log.level)
        configuration.log.format = keys.string("log.format", default: configuration.log.format)

        problems += keys.problems
        problems += ConfigurationValidator.problems(in: configuration, kafkaOnly: kafkaOnly, environment: environment)
        guard problems.isEmpty else { throw ConfigurationProblems(problems) }
        return configuration
    }

    private static func readApp(_ name: String, keys: inout KeyReader) -> PushlineConfiguration.App? {
        let prefix = "apps.\(name)"
        let bundleID = keys.string("\(prefix).bundle_id", default: "")
        let endpoint = keys.string("\(prefix).endpoint", default: "")
        let type = keys.string("\(prefix).auth.type", default: "token")
        let auth: PushlineConfiguration.Auth
        switch type {
        case "token":
            auth = .token(
                keyFile: keys.string("\(prefix).auth.key_file", default: ""),
                keyID: keys.string("\(prefix).auth.key_id", default: ""),
                teamID: keys.string("\(prefix).auth.team_id", default: "")
            )
        case "certificate":
            let p12 = keys.string("\(prefix).auth.p12_file", default: "")
            if p12.isEmpty {
                auth = .certificatePEM(
                    certFile: keys.string("\(prefix).auth.cert_file", default: ""),
                    keyFile: keys.string("\(prefix).auth.key_file", default: "")
                )
            } else {
                auth = .certificatePKCS12(
                    p12File: p12,
                    passwordEnvironmentVariable: keys.string("\(prefix).auth.p12_password_env", default: "")
                )
            }
        default:
            keys.problems.append("\(prefix).auth.type: '\(type)' is not token or certificate")
            return nil
        }
        return PushlineConfiguration.App(bundleID: bundleID, auth: auth, endpoint: endpoint)
    }

    /// App names: the keys under `apps` in the file, plus a comma list in `APPS`.
    private static func appNames(tree: Node?, environment: [String: String]) -> [String] {
        var names: [String] = []
        if let apps = tree?.mapping?["apps"]?.mapping {
            names += apps.keys.compactMap(\.string)
        }
        if let listed = environment["APPS"] {
            names += listed.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }
    }

    /// librdkafka properties: `kafka.properties` in the file, then `KAFKA_PROPERTY_SASL_MECHANISMS=...`
    /// style variables (`_` becomes `.`, lower case), which win.
    private static func kafkaProperties(tree: Node?, environment: [String: String], problems: inout [String]) -> [String: String] {
        var properties: [String: String] = [:]
        if let node = tree?.mapping?["kafka"]?.mapping?["properties"] {
            if let mapping = node.mapping {
                for (key, value) in mapping {
                    guard let name = key.string else { continue }
                    guard let scalar = value.scalar else {
                        problems.append("kafka.properties.\(name): must be a single value")
                        continue
                    }
                    properties[name] = scalar.string
                }
            } else if node.scalar?.string != "" && node.scalar?.string != "{}" {
                problems.append("kafka.properties: must be a mapping of librdkafka property names to values")
            }
        }
        for (variable, value) in environment where variable.hasPrefix("KAFKA_PROPERTY_") {
            let name = variable.dropFirst("KAFKA_PROPERTY_".count).lowercased().replacingOccurrences(of: "_", with: ".")
            if !name.isEmpty {
                properties[name] = value
            }
        }
        return properties
    }

    static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if nsError.domain == NSCocoaErrorDomain, nsError.code == NSFileReadNoSuchFileError {
            return "no such file"
        }
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError {
            return String(cString: strerror(Int32(underlying.code)))
        }
        return nsError.localizedDescription
    }
}
