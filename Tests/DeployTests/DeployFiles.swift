import Foundation
import Testing
import Yams

@testable import PushlineWorker

/// The files under deploy/, read from the source tree this test was compiled from, and the small
/// parsers the cross-checks need (YAML documents, the Dockerfile's instructions, config loading).
enum DeployFiles {
    /// Tests/DeployTests/DeployFiles.swift -> the repository root, three levels up.
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let directory: URL = root.appendingPathComponent("deploy")

    static func url(_ relative: String) -> URL {
        directory.appendingPathComponent(relative)
    }

    static func text(_ relative: String) throws -> String {
        try String(contentsOf: url(relative), encoding: .utf8)
    }

    /// Paths under deploy/, relative to it, whose names end in one of `extensions`.
    static func files(withExtensions extensions: Set<String>) -> [String] {
        let base = directory.standardizedFileURL.path + "/"
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else { return [] }
        var found: [String] = []
        for case let url as URL in walker where extensions.contains(url.pathExtension) {
            let path = url.standardizedFileURL.path
            found.append(path.hasPrefix(base) ? String(path.dropFirst(base.count)) : path)
        }
        return found.sorted()
    }

    /// Every document of a (possibly multi-document) YAML file. A syntax error throws (iterating
    /// Yams' sequence alone would end quietly at the error).
    static func documents(_ relative: String) throws -> [Node] {
        var sequence = try Yams.compose_all(yaml: try text(relative))
        var nodes: [Node] = []
        while let node = sequence.next() { nodes.append(node) }
        if let error = sequence.error { throw error }
        return nodes
    }

    /// The only document of a YAML file.
    static func document(_ relative: String) throws -> Node {
        let all = try documents(relative)
        try #require(all.count == 1, "\(relative): expected one YAML document, found \(all.count)")
        return all[0]
    }

    /// The Kubernetes object of `kind` in deploy/kubernetes/ (exactly one must exist).
    static func kubernetes(_ kind: String) throws -> Node {
        var found: [Node] = []
        for file in files(withExtensions: ["yaml", "yml"]) where file.hasPrefix("kubernetes/") {
            found += try documents(file).filter { $0["kind"]?.string == kind }
        }
        try #require(found.count == 1, "deploy/kubernetes: expected one \(kind), found \(found.count)")
        return found[0]
    }

    // MARK: Configuration files

    /// A Pushline configuration shipped under deploy/.
    struct ConfigurationFile: CustomTestStringConvertible {
        var name: String
        var text: String
        var testDescription: String { name }

        var tree: Node {
            get throws { try #require(try Yams.compose(yaml: text), "\(name): empty") }
        }
    }

    static func configurationFiles() throws -> [ConfigurationFile] {
        [
            ConfigurationFile(name: "pushline.example.yaml", text: try text("pushline.example.yaml")),
            ConfigurationFile(name: "config.example.yaml", text: try text("config.example.yaml")),
            ConfigurationFile(name: "compose.config.yaml", text: try text("compose.config.yaml")),
            ConfigurationFile(name: "kubernetes/configmap.yaml#config.yaml", text: try configMapConfiguration()),
        ]
    }

    /// The config.yaml key of the ConfigMap.
    static func configMapConfiguration() throws -> String {
        let configMap = try kubernetes("ConfigMap")
        return try #require(configMap["data"]?["config.yaml"]?.string, "ConfigMap has no data.config.yaml")
    }

    /// Loads `text` with ConfigurationLoader after pointing every file-valued key it sets
    /// (apns.ca_file, apps.*.auth.*_file) at a fresh 0600 temporary file through the environment,
    /// so only the files' existence on this machine is replaced, nothing else.
    static func load(_ text: String, environment extra: [String: String] = [:]) async throws -> PushlineConfiguration {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("pushline-deploy-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        var environment = extra
        let tree = try #require(try Yams.compose(yaml: text))
        for key in fileKeys(in: tree) {
            let path = scratch.appendingPathComponent(key.replacingOccurrences(of: ".", with: "-")).path
            try "placeholder for \(key)\n".write(toFile: path, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
            environment[ConfigurationKeys.Key.environmentName(key)] = path
        }
        let file = scratch.appendingPathComponent("config.yaml").path
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return try await ConfigurationLoader.load(file: file, environment: environment)
    }

    /// Dotted keys in `tree` that name files and are set to something.
    static func fileKeys(in tree: Node) -> [String] {
        var keys: [String] = []
        if let caFile = tree["apns"]?["ca_file"]?.string, !caFile.isEmpty {
            keys.append("apns.ca_file")
        }
        for (nameNode, app) in tree["apps"]?.mapping ?? [:] {
            guard let name = nameNode.string else { continue }
            for (keyNode, value) in app["auth"]?.mapping ?? [:] {
                guard let key = keyNode.string, key.hasSuffix("_file"), let path = value.string, !path.isEmpty else { continue }
                keys.append("apps.\(name).auth.\(key)")
            }
        }
        return keys
    }

    // MARK: Environment

    /// Prefixes of variables Pushline reads as configuration.
    static let configurationPrefixes = ["KAFKA_", "APNS_", "APPS_", "WORKER_", "METRICS_", "LOG_"]

    /// Every variable name that maps to a key the worker knows, for the given app names.
    static func knownVariables(appNames: [String]) -> Set<String> {
        ConfigurationSchema.environmentNames(appNames: appNames)
    }

    /// The configuration variables among `variables` that no known key answers to.
    static func unknownVariables(_ variables: [String: String], appNames: [String]) -> [String] {
        var apps = appNames
        if let listed = variables["APPS"] {
            apps += listed.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        let known = knownVariables(appNames: apps)
        return variables.keys.filter { name in
            guard configurationPrefixes.contains(where: name.hasPrefix) else { return false }
            if name.hasPrefix("KAFKA_PROPERTY_"), name.count > "KAFKA_PROPERTY_".count { return false }
            return !known.contains(name)
        }.sorted()
    }

    static func appNames(in tree: Node) -> [String] {
        guard let apps = tree["apps"]?.mapping else { return [] }
        return Array(apps.keys).compactMap(\.string)
    }

    // MARK: Dockerfile

    /// The Dockerfile as (INSTRUCTION, arguments), continuation lines joined, comments dropped.
    static func dockerfileInstructions() throws -> [(instruction: String, arguments: String)] {
        var logical: [String] = []
        var current = ""
        for raw in try text("Dockerfile").split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if current.isEmpty, line.isEmpty || line.hasPrefix("#") { continue }
            if !current.isEmpty, line.hasPrefix("#") { continue }
            if line.hasSuffix("\\") {
                current += line.dropLast() + " "
            } else {
                current += line
                logical.append(current)
                current = ""
            }
        }
        return logical.map { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            return (String(parts[0]).uppercased(), parts.count > 1 ? String(parts[1]).trimmingCharacters(in: .whitespaces) : "")
        }
    }

    /// The default value of a Dockerfile `ARG NAME=value`.
    static func dockerfileArgument(_ name: String) throws -> String {
        let found = try dockerfileInstructions().first { $0.instruction == "ARG" && $0.arguments.hasPrefix("\(name)=") }
        let argument = try #require(found, "Dockerfile: no ARG \(name)=...").arguments
        return String(argument.dropFirst(name.count + 1))
    }
}

extension Node {
    /// Walks nested mappings: `node.at("spec", "template", "spec")`.
    func at(_ keys: String...) -> Node? {
        var node: Node? = self
        for key in keys { node = node?[key] }
        return node
    }

    /// The `environment:` of a compose service as a dictionary (mapping or `NAME=value` list form).
    var composeEnvironment: [String: String] {
        if let mapping = self["environment"]?.mapping {
            var result: [String: String] = [:]
            for (key, value) in mapping {
                if let name = key.string { result[name] = value.string ?? "" }
            }
            return result
        }
        var result: [String: String] = [:]
        for entry in self["environment"]?.array() ?? [] {
            guard let text = entry.string else { continue }
            let parts = text.split(separator: "=", maxSplits: 1)
            result[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return result
    }
}
