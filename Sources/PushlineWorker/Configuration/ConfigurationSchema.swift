import Yams

/// The keys the configuration file may hold, to catch typos (`max_inflght`) before they silently
/// fall back to a default.
enum ConfigurationSchema {
    static let sections: [String: Set<String>] = [
        "kafka": ["brokers", "group_id", "jobs_topic", "results_topic", "invalidations_topic", "dead_letter_topic", "properties"],
        "apns": ["endpoint", "ca_file", "connections", "max_streams_per_connection", "request_timeout_ms", "max_attempts",
            "hold_min_systemic", "hold_percent", "hold_limit_ms",
        ],
        "worker": ["max_inflight", "shutdown_timeout_ms", "invalidate_on", "max_job_bytes", "allow_insecure_key_files"],
        "metrics": ["listen"],
        "log": ["level", "format"],
    ]
    static let appKeys: Set<String> = ["bundle_id", "auth", "endpoint"]
    static let authKeys: Set<String> = [
        "type", "key_file", "key_id", "team_id", "cert_file", "p12_file", "p12_password_env",
    ]

    /// Every key in `tree` that Pushline does not know, one problem line each.
    static func unknownKeys(in tree: Node) -> [String] {
        guard let top = tree.mapping else { return [] }
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
                    problems += unknown(in: app, allowed: appKeys, path: "apps.\(name)")
                    if let auth = app.mapping?["auth"] {
                        problems += unknown(in: auth, allowed: authKeys, path: "apps.\(name).auth")
                    }
                }
            } else if let allowed = sections[key] {
                problems += unknown(in: value, allowed: allowed, path: key)
            } else {
                problems.append("\(key): unknown section (known: apps, \(sections.keys.sorted().joined(separator: ", ")))")
            }
        }
        return problems
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
