import Configuration
import Foundation
import Yams

/// The configuration file, parsed once: its keys for swift-configuration (typed by
/// `ConfigurationKeys`), the names that are data (apps, Kafka properties) and its unknown keys.
struct ConfigurationFile {
    let tree: Node

    /// Reads and parses `path`; a file that cannot be read or parsed is one problem.
    init(path: String) throws(ConfigurationProblems) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationProblems(["config: cannot read '\(path)': \(ConfigurationLoader.reason(error))"])
        }
        let tree: Node?
        do {
            tree = try Yams.compose(yaml: text)
        } catch {
            throw ConfigurationProblems(["config: '\(path)' is not valid YAML: \(error)"])
        }
        guard let tree else {
            self.tree = Node.mapping(Node.Mapping([]))
            return
        }
        guard tree.mapping != nil else {
            throw ConfigurationProblems(["config: '\(path)' must be a YAML mapping at the top level"])
        }
        self.tree = tree
    }

    /// The app names under `apps`.
    var appNames: [String] {
        tree.mapping?["apps"]?.mapping?.keys.compactMap(\.string) ?? []
    }

    /// A provider holding the file's values of the table's keys (for `appNames`), each already of
    /// its key's type; a value of the wrong type is a problem instead.
    func provider(appNames: [String], problems: inout [String]) -> InMemoryProvider {
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        func add<Root>(_ key: ConfigurationKey<Root>, absoluteName: String) {
            let components = absoluteName.split(separator: ".").map(String.init)
            guard let node = Self.node(at: components, in: tree) else { return }
            switch Self.content(of: node, for: key.field, key: absoluteName) {
            case .success(let content):
                values[AbsoluteConfigKey(components)] = ConfigValue(content, isSecret: key.isSecret)
            case .failure(let problem):
                problems.append(problem.line)
            }
        }
        for key in ConfigurationKeys.global {
            add(key, absoluteName: key.name)
        }
        for app in appNames {
            for key in ConfigurationKeys.app {
                add(key, absoluteName: "apps.\(app).\(key.name)")
            }
        }
        return InMemoryProvider(name: "file", values: values)
    }

    /// librdkafka properties under `kafka.properties`.
    func kafkaProperties(problems: inout [String]) -> [String: String] {
        guard let node = tree.mapping?["kafka"]?.mapping?["properties"] else { return [:] }
        guard let mapping = node.mapping else {
            if node.scalar?.string != "" && node.scalar?.string != "{}" {
                problems.append("kafka.properties: must be a mapping of librdkafka property names to values")
            }
            return [:]
        }
        var properties: [String: String] = [:]
        for (key, value) in mapping {
            guard let name = key.string else { continue }
            guard let scalar = value.scalar else {
                problems.append("kafka.properties.\(name): must be a single value")
                continue
            }
            properties[name] = scalar.string
        }
        return properties
    }

    private struct Problem: Error {
        let line: String
    }

    private static func node(at components: [String], in tree: Node) -> Node? {
        var node = tree
        for component in components {
            guard let next = node.mapping?[component] else { return nil }
            node = next
        }
        return node
    }

    private static func content<Root>(
        of node: Node,
        for field: ConfigurationKey<Root>.Field,
        key: String
    ) -> Result<ConfigContent, Problem> {
        switch field {
        case .string:
            guard let scalar = node.scalar else { return .failure(Problem(line: "\(key): must be a string")) }
            return .success(.string(scalar.string))
        case .integer:
            guard let scalar = node.scalar, let number = Int.construct(from: scalar) else {
                let shown = node.scalar.map { "'\($0.string)' is not an integer" } ?? "must be an integer"
                return .failure(Problem(line: "\(key): \(shown)"))
            }
            return .success(.int(number))
        case .boolean:
            guard let scalar = node.scalar, let flag = Bool.construct(from: scalar) else {
                let shown = node.scalar.map { "'\($0.string)' is not true or false" } ?? "must be true or false"
                return .failure(Problem(line: "\(key): \(shown)"))
            }
            return .success(.bool(flag))
        case .strings:
            if let sequence = node.sequence {
                var items: [String] = []
                for item in sequence {
                    guard let scalar = item.scalar else { return .failure(Problem(line: "\(key): must be a list of strings")) }
                    items.append(scalar.string)
                }
                return .success(.stringArray(items))
            }
            guard let scalar = node.scalar else { return .failure(Problem(line: "\(key): must be a list of strings")) }
            return .success(.stringArray(KeyReader.list(scalar.string)))
        }
    }
}
