extension PushlineConfiguration {
    /// The effective configuration as YAML, for `pushline run --print-config`: every key of
    /// `ConfigurationKeys`, defaults included. Secret keys, and Kafka properties that hold
    /// passwords, secrets or keys, are shown as `<redacted>`; key files are paths, and the PKCS#12
    /// password is only named by its environment variable.
    public func renderedYAML() -> String {
        var lines: [String] = []
        for section in ConfigurationKeys.sections {
            lines.append("\(section):")
            if section == "apps" {
                for (name, app) in apps.sorted(by: { $0.key < $1.key }) {
                    lines.append("  \(ConfigurationValue.quoted(name)):")
                    Self.render(ConfigurationKeys.app, of: app, indent: "    ", into: &lines)
                }
                continue
            }
            Self.render(ConfigurationKeys.global.filter { $0.section == section }, of: self, indent: "  ", into: &lines)
            if section == "kafka" {
                renderProperties(into: &lines)
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `keys` (one section, in table order) as nested YAML; a key's dotted name opens a mapping
    /// the first time its prefix appears (`auth.type` → `auth:` then `  type:`).
    static func render<Root>(_ keys: [ConfigurationKey<Root>], of root: Root, indent: String, into lines: inout [String]) {
        var opened: String?
        for key in keys {
            var components = key.name.split(separator: ".").map(String.init)
            if indent == "  " { components.removeFirst() }  // the section is already open
            let leaf = components.removeLast()
            let parent = components.joined(separator: ".")
            if !parent.isEmpty, parent != opened {
                lines.append(indent + "\(parent):")
                opened = parent
            }
            let value = key.isSecret ? "\"<redacted>\"" : key.value(in: root).yaml
            lines.append(indent + (parent.isEmpty ? "" : "  ") + "\(leaf): \(value)")
        }
    }

    private func renderProperties(into lines: inout [String]) {
        guard !kafka.properties.isEmpty else {
            lines.append("  properties: {}")
            return
        }
        lines.append("  properties:")
        for (key, value) in kafka.properties.sorted(by: { $0.key < $1.key }) {
            let shown = Self.isSecretProperty(key) ? "<redacted>" : value
            lines.append("    \(ConfigurationValue.quoted(key)): \(ConfigurationValue.quoted(shown))")
        }
    }

    /// librdkafka properties whose values are secrets.
    static func isSecretProperty(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return ["password", "secret", "key.pem", "token", "jaas"].contains { lowered.contains($0) }
    }
}
