import Configuration
import Foundation

/// Loads `PushlineConfiguration` from the YAML file and the environment, and validates it whole.
///
/// Every key of `ConfigurationKeys` is read through swift-configuration with the environment
/// first and the file second, so `KAFKA_BROKERS` overrides `kafka.brokers` (dots become `_`,
/// upper case). The file is parsed once (`ConfigurationFile`).
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
        var (configuration, problems) = try read(file: file, environment: environment)
        problems += ConfigurationValidator.problems(in: configuration, kafkaOnly: kafkaOnly, environment: environment)
        guard problems.isEmpty else { throw ConfigurationProblems(problems) }
        return configuration
    }

    /// Reads every key without validating values: for tests of the reading itself.
    static func loadUnvalidated(file: String? = nil, environment: [String: String]) throws -> PushlineConfiguration {
        let (configuration, problems) = try read(file: file, environment: environment)
        guard problems.isEmpty else { throw ConfigurationProblems(problems) }
        return configuration
    }

    /// The configuration the file and the environment give, and the problems met reading it
    /// (unknown keys, values of the wrong type). A file that cannot be read or parsed throws.
    private static func read(
        file: String?,
        environment: [String: String]
    ) throws(ConfigurationProblems) -> (PushlineConfiguration, [String]) {
        var problems: [String] = []
        let parsed = try file.map { path throws(ConfigurationProblems) in try ConfigurationFile(path: path) }
        let names = appNames(file: parsed, environment: environment)

        var providers: [any ConfigProvider] = [EnvironmentVariablesProvider(environmentVariables: environment)]
        if let parsed {
            problems += ConfigurationSchema.unknownKeys(in: parsed.tree)
            providers.append(parsed.provider(appNames: names, problems: &problems))
        }
        var keys = KeyReader(reader: ConfigReader(providers: providers))

        var configuration = PushlineConfiguration()
        for key in ConfigurationKeys.global {
            key.read(into: &configuration, from: &keys, absoluteName: key.name)
        }
        configuration.kafka.properties = kafkaProperties(file: parsed, environment: environment, problems: &problems)
        for name in names {
            var app = PushlineConfiguration.App()
            for key in ConfigurationKeys.app {
                key.read(into: &app, from: &keys, absoluteName: "apps.\(name).\(key.name)")
            }
            configuration.apps[name] = app
        }
        return (configuration, problems + keys.problems)
    }

    /// App names: the keys under `apps` in the file, plus a comma list in `APPS`.
    private static func appNames(file: ConfigurationFile?, environment: [String: String]) -> [String] {
        var names = file?.appNames ?? []
        if let listed = environment["APPS"] {
            names += listed.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }
    }

    /// librdkafka properties: `kafka.properties` in the file, then `KAFKA_PROPERTY_SASL_MECHANISMS=...`
    /// style variables (`_` becomes `.`, lower case), which win.
    private static func kafkaProperties(
        file: ConfigurationFile?,
        environment: [String: String],
        problems: inout [String]
    ) -> [String: String] {
        var properties = file?.kafkaProperties(problems: &problems) ?? [:]
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
