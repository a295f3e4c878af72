import Foundation
import Testing
import Yams

@testable import PushlineWorker

/// The key table is the one place a key is declared: these tests hold the loader, the printer,
/// the unknown-key check and the reference document to it.
@Suite struct ConfigurationKeysTests {
    @Test func everyKeyIsNamedOnceAndBelongsToAKnownSection() {
        let names = ConfigurationKeys.global.map(\.name) + ConfigurationKeys.app.map { "apps.NAME.\($0.name)" }
        #expect(Set(names).count == names.count, "duplicated: \(names)")
        for key in ConfigurationKeys.global {
            #expect(ConfigurationKeys.sections.contains(key.section), "\(key.name)")
            #expect(!key.summary.isEmpty && !key.advice.isEmpty, "\(key.name) needs its documentation")
        }
    }

    @Test func theDefaultsPassTheirOwnRules() {
        let defaults = PushlineConfiguration()
        for key in ConfigurationKeys.global where key.name != "apns.ca_file" {
            #expect(key.problems(in: defaults, absoluteName: key.name) == [], "\(key.name)")
        }
    }

    /// What `--print-config` prints loads back to the same configuration, and holds no unknown key.
    @Test func printedConfigurationLoadsBackUnchanged() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushline-keys-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("AuthKey.p8").path
        try "key".write(toFile: key, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)

        var configuration = PushlineConfiguration()
        configuration.kafka.brokers = "10.0.0.1:9092,10.0.0.2:9092"
        configuration.kafka.invalidationsTopic = "push.invalidations"
        configuration.kafka.properties = ["client.id": "pushline-7"]
        configuration.apns.connections = 9
        configuration.apns.holdPercent = 70
        configuration.worker.invalidateOn = ["Unregistered", "ExpiredToken"]
        configuration.worker.allowInsecureKeyFiles = true
        configuration.log.format = "json"
        configuration.apps["default"] = .init(
            bundleID: "com.example.app",
            auth: .token(keyFile: key, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        )
        configuration.apps["beta \"one\""] = .init(
            bundleID: "com.example.beta",
            auth: .token(keyFile: key, keyID: "ABC123DEFG", teamID: "0123456789"),
            endpoint: "sandbox"
        )

        let printed = configuration.renderedYAML()
        let file = directory.appendingPathComponent("printed.yaml").path
        try printed.write(toFile: file, atomically: true, encoding: .utf8)
        let loaded = try await ConfigurationLoader.load(file: file, environment: [:])
        #expect(loaded == configuration, "\(printed)")
    }

    /// A value unlike `value` (the default), as a variable's text and as the value it must give.
    static func different(from value: ConfigurationValue) -> (text: String, expected: ConfigurationValue) {
        switch value {
        case .string(let text): (text + "x", .string(text + "x"))
        case .integer(let number): (String(number + 1), .integer(number + 1))
        case .boolean(let flag): (String(!flag), .boolean(!flag))
        case .strings(let list): ((list + ["ExpiredToken"]).joined(separator: ","), .strings(list + ["ExpiredToken"]))
        }
    }

    @Test func everyKeyIsReadFromItsVariable() async throws {
        // A value unlike the default for each key, set only through the environment.
        var environment: [String: String] = ["APPS": "default"]
        var expected: [String: ConfigurationValue] = [:]
        for key in ConfigurationKeys.global {
            let (text, value) = Self.different(from: key.value(in: PushlineConfiguration()))
            environment[ConfigurationKeys.Key.environmentName(key.name)] = text
            expected[key.name] = value
        }
        for key in ConfigurationKeys.app {
            let (text, value) = Self.different(from: key.value(in: PushlineConfiguration.App()))
            environment["APPS_DEFAULT_" + ConfigurationKeys.AppKey.environmentName(key.name)] = text
            expected["apps.default.\(key.name)"] = value
        }
        let configuration = try ConfigurationLoader.loadUnvalidated(environment: environment)
        for key in ConfigurationKeys.global {
            #expect(key.value(in: configuration) == expected[key.name], "\(key.name)")
        }
        let app = try #require(configuration.apps["default"])
        for key in ConfigurationKeys.app {
            #expect(key.value(in: app) == expected["apps.default.\(key.name)"], "apps.default.\(key.name)")
        }
    }

    @Test func aMisspeltKeyIsUnknownAndEveryTableKeyIsKnown() throws {
        var yaml = ""
        for section in ConfigurationKeys.sections where section != "apps" {
            yaml += "\(section):\n"
            for key in ConfigurationKeys.global where key.section == section {
                yaml += "  \(key.nameInSection): x\n"
            }
            if section == "worker" { yaml += "  max_inflght: 1\n" }
        }
        yaml += "apps:\n  a:\n    bundle_id: x\n    auth: {type: token, key_fil: x}\n"
        let tree = try #require(try Yams.compose(yaml: yaml))
        #expect(
            ConfigurationSchema.unknownKeys(in: tree).sorted() == ["apps.a.auth.key_fil: unknown key", "worker.max_inflght: unknown key"]
        )
    }

    @Test func aSecretKeyIsRedactedWhenPrinted() {
        struct Root: Sendable {
            var password = "hunter2"
            var user = "pushline"
        }
        let keys = [
            ConfigurationKey<Root>("proxy.user", .string(\.user), "user", change: "never"),
            ConfigurationKey<Root>("proxy.password", .string(\.password), secret: true, "password", change: "never"),
        ]
        var lines: [String] = []
        PushlineConfiguration.render(keys, of: Root(), indent: "    ", into: &lines)
        #expect(lines == ["    proxy:", "      user: \"pushline\"", "      password: \"<redacted>\""])
    }

    /// docs/configuration.md's key tables are the table's (run with PUSHLINE_UPDATE_DOCS=1 to
    /// rewrite them).
    @Test func theReferenceDocumentShowsTheTable() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/configuration.md").path
        let document = try String(contentsOfFile: path, encoding: .utf8)
        for section in ConfigurationReference.sections {
            #expect(document.contains(ConfigurationReference.openingMarker(section)), "docs/configuration.md lacks the \(section) table")
        }
        let updated = ConfigurationReference.updating(document)
        if updated != document, ProcessInfo.processInfo.environment["PUSHLINE_UPDATE_DOCS"] == "1" {
            try updated.write(toFile: path, atomically: true, encoding: .utf8)
            return
        }
        #expect(
            updated == document,
            "docs/configuration.md is out of date: PUSHLINE_UPDATE_DOCS=1 swift test --filter ConfigurationKeysTests"
        )
    }
}
