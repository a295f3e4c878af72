import Foundation

/// One configuration key: its name, type and default (through the property it sets), rule,
/// secrecy and documentation. `ConfigurationKeys` lists them all; the loader, the validator,
/// `--print-config`, the unknown-key check and docs/configuration.md all read that list.
struct ConfigurationKey<Root: Sendable>: Sendable {
    /// The property a key sets, which also fixes its type and (in `Root()`) its default.
    enum Field: Sendable {
        case string(any WritableKeyPath<Root, String> & Sendable)
        case integer(any WritableKeyPath<Root, Int> & Sendable)
        case boolean(any WritableKeyPath<Root, Bool> & Sendable)
        case strings(any WritableKeyPath<Root, [String]> & Sendable)
    }

    /// Dotted, relative to the root: `kafka.brokers`, or `auth.key_file` under `apps.NAME`.
    let name: String
    let field: Field
    let rule: ConfigurationRule
    /// Shown as `<redacted>` by `--print-config`.
    let isSecret: Bool
    /// What the key does (one line of the reference).
    let summary: String
    /// When to change it (one line of the reference).
    let advice: String

    init(
        _ name: String,
        _ field: Field,
        rule: ConfigurationRule = .any,
        secret: Bool = false,
        _ summary: String,
        change advice: String
    ) {
        self.name = name
        self.field = field
        self.rule = rule
        self.isSecret = secret
        self.summary = summary
        self.advice = advice
    }

    /// The section a key belongs to: `kafka` for `kafka.brokers`, `auth` for `auth.key_file`,
    /// "" for a key at the root (`bundle_id`).
    var section: String {
        guard let dot = name.firstIndex(of: ".") else { return "" }
        return String(name[..<dot])
    }

    /// The name within its section: `brokers` for `kafka.brokers`, `key_file` for
    /// `auth.key_file`, the whole name for a key at the root.
    var nameInSection: String {
        guard let dot = name.firstIndex(of: ".") else { return name }
        return String(name[name.index(after: dot)...])
    }

    /// The key's value in `root`.
    func value(in root: Root) -> ConfigurationValue {
        switch field {
        case .string(let path): .string(root[keyPath: path])
        case .integer(let path): .integer(root[keyPath: path])
        case .boolean(let path): .boolean(root[keyPath: path])
        case .strings(let path): .strings(root[keyPath: path])
        }
    }

    /// Reads the key at `absoluteName` (its name with any prefix) into `root`; a value that is
    /// present but of the wrong type becomes a problem and leaves the default.
    func read(into root: inout Root, from keys: inout KeyReader, absoluteName: String) {
        switch field {
        case .string(let path): root[keyPath: path] = keys.string(absoluteName, default: root[keyPath: path])
        case .integer(let path): root[keyPath: path] = keys.int(absoluteName, default: root[keyPath: path])
        case .boolean(let path): root[keyPath: path] = keys.bool(absoluteName, default: root[keyPath: path])
        case .strings(let path): root[keyPath: path] = keys.stringArray(absoluteName, default: root[keyPath: path])
        }
    }

    /// The problems with the key's value in `root`, by its rule.
    func problems(in root: Root, absoluteName: String) -> [String] {
        rule.problems(value(in: root), key: absoluteName)
    }

    /// The environment variable that overrides the key: upper case, `.` → `_`
    /// (swift-configuration's `EnvironmentVariablesProvider` spelling).
    static func environmentName(_ absoluteName: String) -> String {
        absoluteName.uppercased().replacingOccurrences(of: ".", with: "_")
    }
}
