/// A configuration value of one of the four types a key can have.
enum ConfigurationValue: Sendable, Hashable {
    case string(String)
    case integer(Int)
    case boolean(Bool)
    case strings([String])

    /// The value as YAML, for `--print-config` (strings always quoted).
    var yaml: String {
        switch self {
        case .string(let text): Self.quoted(text)
        case .integer(let number): String(number)
        case .boolean(let flag): String(flag)
        case .strings(let list): "[" + list.map(Self.quoted).joined(separator: ", ") + "]"
        }
    }

    /// The value as the configuration reference shows a default.
    var documented: String {
        switch self {
        case .string(let text): text.isEmpty ? "`\"\"`" : "`\(text)`"
        case .integer(let number): "`\(number)`"
        case .boolean(let flag): "`\(flag)`"
        case .strings(let list): "`[" + list.joined(separator: ", ") + "]`"
        }
    }

    /// A double-quoted YAML scalar.
    static func quoted(_ value: String) -> String {
        var escaped = ""
        for character in value {
            switch character {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return "\"" + escaped + "\""
    }
}
