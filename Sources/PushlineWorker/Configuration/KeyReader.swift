import Configuration
import Foundation

/// Reads typed keys through a `ConfigReader` and records a problem, naming the key, for a value
/// that is present but of the wrong type (swift-configuration would silently use the default).
struct KeyReader {
    let reader: ConfigReader
    var problems: [String] = []

    init(reader: ConfigReader) {
        self.reader = reader
    }

    mutating func string(_ key: String, default value: String) -> String {
        if let found = reader.string(forKey: ConfigKey(key)) { return found }
        if present(key) { problems.append("\(key): must be a string") }
        return value
    }

    mutating func int(_ key: String, default value: Int) -> Int {
        if let found = reader.int(forKey: ConfigKey(key)) { return found }
        if let text = reader.string(forKey: ConfigKey(key)) {
            problems.append("\(key): '\(text)' is not an integer")
        } else if present(key) {
            problems.append("\(key): must be an integer")
        }
        return value
    }

    mutating func bool(_ key: String, default value: Bool) -> Bool {
        if let found = reader.bool(forKey: ConfigKey(key)) { return found }
        if let text = reader.string(forKey: ConfigKey(key)) {
            problems.append("\(key): '\(text)' is not true or false")
        }
        return value
    }

    mutating func stringArray(_ key: String, default value: [String]) -> [String] {
        if let found = reader.stringArray(forKey: ConfigKey(key)) { return found }
        if let text = reader.string(forKey: ConfigKey(key)) {
            return Self.list(text)
        }
        return value
    }

    /// A comma-separated list, blanks around items trimmed.
    static func list(_ text: String) -> [String] {
        text.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
    }

    /// Whether any provider has something at `key` (of whatever type).
    private func present(_ key: String) -> Bool {
        reader.stringArray(forKey: ConfigKey(key)) != nil
    }
}
