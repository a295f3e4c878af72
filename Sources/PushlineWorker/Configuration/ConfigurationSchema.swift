import Yams

/// The shape `ConfigurationKeys` gives the file: which keys it may hold (to catch typos such as
/// `max_inflght` before they silently fall back to a default) and which variables override them.
enum ConfigurationSchema {
    /// Every key in `tree` that Pushline does not know, one problem line each.
    static func unknownKeys(in tree: Node) -> [String] {
        guard let top = tree.mapping else { return [] }
        let appSections = Set(ConfigurationKeys.app.map(\.section).filter { !$0.isEmpty })
        let appTopLevel = Set(ConfigurationKeys.app.map { $0.section.isEmpty ? $0.name : $0.section })
        var problems: [String] = []
        for (keyNode, value) in top {
            guard let key = keyNode.string else { continue }
            if key == "apps" {
                guard let apps = value.mapping else {
                    problems.append("apps: must be a mapping of app names to app profiles")
                    continue
                }
                for (nameNode, app) in apps {
                    let name = nameNode.string ?? "?"
                    problems += unknown(in: app, allowed: appTopLevel, path: "apps.\(name)")
                    for section in appSections.sorted() {
                        guard let node = app.mapping?[section] else { continue }
                        let allowed = Set(ConfigurationKeys.app.filter { $0.section == section }.map(\.nameInSection))
                        problems += unknown(in: node, allowed: allowed, path: "apps.\(name).\(section)")
                    }
                }
            } else if ConfigurationKeys.sections.contains(key) {
                problems += unknown(in: value, allowed: ConfigurationKeys.names(in: key), path: key)
            } else {
                let known = ConfigurationKeys.sections.sorted().joined(separator: ", ")
                problems.append("\(key): unknown section (known: \(known))")
            }
        }
        return problems
    }

    /// Every environment variable that sets a key, for the given app names (besides `APPS` and
    /// the `KAFKA_PROPERTY_*` family).
    static func environmentNames(appNames: [String]) -> Set<String> {
        var names: Set<String> = ["APPS"]
        for key in ConfigurationKeys.global {
            names.insert(ConfigurationKeys.Key.environmentName(key.name))
        }
        for app in appNames {
            for key in ConfigurationKeys.app {
                names.insert(ConfigurationKeys.AppKey.environmentName("apps.\(app).\(key.name)"))
            }
        }
        return names
    }

    private static func unknown(in node: Node, allowed: Set<String>, path: String) -> [String] {
        guard let mapping = node.mapping else {
            if node.scalar?.string == "" { return [] }
            return ["\(path): must be a mapping"]
        }
        return mapping.keys.compactMap(\.string).filter { !allowed.contains($0) }.sorted().map {
            "\(path).\($0): unknown key"
        }
    }
}
