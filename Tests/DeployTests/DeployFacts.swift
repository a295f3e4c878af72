import Foundation
import PushlineAPNSCore
import Testing
import Yams

@testable import PushlineWorker

/// What compose.yaml says, in the terms the cross-checks need.
enum ComposeFacts {
    static func services(_ compose: Node) throws -> [(name: String, service: Node)] {
        let mapping = try #require(compose["services"]?.mapping, "compose.yaml: no services")
        return mapping.compactMap { key, value in key.string.map { ($0, value) } }
    }

    /// The image compose builds from deploy/Dockerfile.
    static func pushlineImage(_ compose: Node) throws -> String {
        let built = try services(compose).first { $0.service.at("build", "dockerfile")?.string == "deploy/Dockerfile" }
        let service = try #require(built, "compose.yaml: no service builds deploy/Dockerfile").service
        return try #require(service["image"]?.string, "compose.yaml: the built service names no image")
    }

    /// Services running the Pushline image (worker, mock, ...).
    static func pushlineServices(_ compose: Node) throws -> [(name: String, service: Node)] {
        let image = try pushlineImage(compose)
        return try services(compose).filter { $0.service["image"]?.string == image }
    }

    /// Services running `pushline run`.
    static func workerServices(_ compose: Node) throws -> [(name: String, service: Node)] {
        try pushlineServices(compose).filter { command($0.service).first == "run" }
    }

    static func service(named name: String, in compose: Node) throws -> Node {
        try #require(try services(compose).first { $0.name == name }?.service, "compose.yaml: no service \(name)")
    }

    /// A service's command as arguments (list form, or a string split on white space).
    static func command(_ service: Node) -> [String] {
        if let list = service["command"]?.sequence {
            return list.compactMap(\.string)
        }
        return service["command"]?.string?.split(whereSeparator: \.isWhitespace).map(String.init) ?? []
    }

    /// The value after `flag` in `arguments`.
    static func value(of flag: String, in arguments: [String]) -> String? {
        guard let index = arguments.firstIndex(of: flag), arguments.indices.contains(index + 1) else { return nil }
        return arguments[index + 1]
    }

    /// Topics created with kafka-topics.sh --create anywhere in compose.yaml, with their partitions.
    static func createdTopics(_ compose: Node) throws -> [String: Int] {
        var topics: [String: Int] = [:]
        for (_, service) in try services(compose) {
            for line in command(service).joined(separator: "\n").split(separator: "\n") {
                let words = line.split(whereSeparator: \.isWhitespace).map(String.init)
                guard words.first?.hasSuffix("kafka-topics.sh") == true, words.contains("--create"),
                    let topic = value(of: "--topic", in: words), let partitions = value(of: "--partitions", in: words).flatMap(Int.init)
                else { continue }
                topics[topic] = partitions
            }
        }
        return topics
    }

    /// `depends_on` as service -> condition.
    static func dependencies(_ service: Node) -> [String: String] {
        var result: [String: String] = [:]
        for (key, value) in service["depends_on"]?.mapping ?? [:] {
            if let name = key.string { result[name] = value["condition"]?.string ?? "service_started" }
        }
        for entry in service["depends_on"]?.array() ?? [] {
            if let name = entry.string { result[name] = "service_started" }
        }
        return result
    }

    /// Container-side ports of a service's `ports:` ("HOST:CONTAINER", "IP:HOST:CONTAINER" or "CONTAINER").
    static func containerPorts(_ service: Node) -> [Int] {
        (service["ports"]?.array() ?? []).compactMap { entry in
            if let target = entry["target"]?.int { return target }
            return entry.string?.split(separator: ":").last.flatMap { Int($0.split(separator: "/")[0]) }
        }
    }

    /// Volume mounts (short syntax) as container path -> source.
    static func mounts(_ service: Node) -> [String: String] {
        var result: [String: String] = [:]
        for entry in service["volumes"]?.array() ?? [] {
            guard let text = entry.string else { continue }
            let parts = text.split(separator: ":").map(String.init)
            if parts.count >= 2 { result[parts[1]] = parts[0] }
        }
        return result
    }

    /// Compose durations such as "45s", "1m30s", "500ms" in milliseconds.
    static func milliseconds(_ duration: String) -> Int? {
        var total = 0
        var number = ""
        var unit = ""
        func flush() -> Bool {
            guard let value = Int(number) else { return false }
            switch unit {
            case "ms": total += value
            case "s": total += value * 1000
            case "m": total += value * 60_000
            case "h": total += value * 3_600_000
            default: return false
            }
            number = ""
            unit = ""
            return true
        }
        for character in duration {
            if character.isNumber {
                if !unit.isEmpty, !flush() { return nil }
                number.append(character)
            } else {
                unit.append(character)
            }
        }
        return flush() ? total : nil
    }
}

/// What the Kubernetes manifests say, in the terms the cross-checks need.
enum KubernetesFacts {
    static func podSpec(_ deployment: Node) throws -> Node {
        try #require(deployment.at("spec", "template", "spec"), "Deployment: no spec.template.spec")
    }

    /// The worker container (the one running `run`).
    static func workerContainer(_ deployment: Node) throws -> Node {
        let containers = try podSpec(deployment)["containers"]?.array() ?? []
        let worker = containers.first { ($0["args"]?.array().first?.string) == "run" }
        return try #require(worker, "Deployment: no container with args [run, ...]")
    }

    static func initContainer(_ name: String, in deployment: Node) throws -> Node {
        let found = try podSpec(deployment)["initContainers"]?.array().first { $0["name"]?.string == name }
        return try #require(found, "Deployment: no init container \(name)")
    }

    static func volume(_ name: String, in deployment: Node) throws -> Node {
        let found = try podSpec(deployment)["volumes"]?.array().first { $0["name"]?.string == name }
        return try #require(found, "Deployment: no volume \(name)")
    }

    /// The volume (name) whose source is `kind`, e.g. "secret" or "configMap".
    static func volumes(ofKind kind: String, in deployment: Node) throws -> [Node] {
        try podSpec(deployment)["volumes"]?.array().filter { $0[kind] != nil } ?? []
    }

    static func mountPath(of volume: String, in container: Node) -> String? {
        container["volumeMounts"]?.array().first { $0["name"]?.string == volume }?["mountPath"]?.string
    }

    /// A probe's or Service's port: a number, or the name of one of the container's ports.
    static func resolve(_ port: Node?, in container: Node) -> Int? {
        guard let port else { return nil }
        if let number = port.int { return number }
        let named = container["ports"]?.array().first { $0["name"]?.string == port.string }
        return named?["containerPort"]?.int
    }

    /// Whether every label in `selector` is also in `labels`.
    static func selects(_ selector: Node?, _ labels: Node?) -> Bool {
        guard let selector = selector?.mapping, !selector.isEmpty, let labels else { return false }
        return selector.allSatisfy { key, value in labels[key]?.string == value.string && value.string != nil }
    }
}

/// The port in `metrics.listen` of the configuration Kubernetes deploys.
func deployedMetricsPort() throws -> Int {
    let tree = try #require(try Yams.compose(yaml: try DeployFiles.configMapConfiguration()))
    let listen = try #require(tree.at("metrics", "listen")?.string)
    return try #require(HostPort(listen)?.port, "ConfigMap metrics.listen: \(listen)")
}
