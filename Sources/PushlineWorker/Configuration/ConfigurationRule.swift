import Foundation
import PushlineAPNSCore

/// What one key's value must be, checked on its own. Rules that relate keys (a custom endpoint
/// needs `apns.ca_file`; a token app needs a key id) are in `ConfigurationValidator`.
enum ConfigurationRule: Sendable {
    /// Anything of the key's type.
    case any
    /// A non-empty string; `hint` follows the problem.
    case nonEmpty(hint: String? = nil)
    /// An integer in `range`; `note` explains the bounds.
    case range(ClosedRange<Int>, note: String? = nil)
    /// An integer of at least `minimum`.
    case atLeast(Int)
    /// One of `choices`.
    case oneOf([String])
    /// `production`, `sandbox` or HOST:PORT ("" too when `optional`).
    case endpoint(optional: Bool)
    /// HOST:PORT, or "" for off.
    case hostPortOrOff
    /// `http://[user@]host:port`, or "" for none.
    case proxyOrEmpty
    /// A readable file, or "" for none.
    case readableFileOrEmpty
    /// APNs reasons whose documented status is 410: only those mean a token is dead.
    case tokenGoneReasons

    /// The rule as the configuration reference states it, or nil when there is nothing to say.
    var documented: String? {
        switch self {
        case .any: nil
        case .nonEmpty: "not empty"
        case .range(let range, _): "\(range.lowerBound)..\(range.upperBound)"
        case .atLeast(let minimum): "≥ \(minimum)"
        case .oneOf(let choices): choices.map { "`\($0)`" }.joined(separator: " \\| ")
        case .endpoint(let optional):
            optional
                ? "`\"\"`, `production`, `sandbox` (`:2197` for Apple's alternative port) or HOST:PORT"
                : "`production`, `sandbox` (`:2197` for Apple's alternative port) or HOST:PORT"
        case .hostPortOrOff: "HOST:PORT or `\"\"`"
        case .proxyOrEmpty: "`http://[user@]host:port` or `\"\"`"
        case .readableFileOrEmpty: "a readable file, or `\"\"`"
        case .tokenGoneReasons: "`Unregistered`, `ExpiredToken` (410 reasons)"
        }
    }

    /// The problems with `value` at `key`, one line each.
    func problems(_ value: ConfigurationValue, key: String) -> [String] {
        switch (self, value) {
        case (.any, _):
            return []
        case (.nonEmpty(let hint), .string(let text)):
            guard text.trimmingCharacters(in: .whitespaces).isEmpty else { return [] }
            return ["\(key): empty" + (hint.map { "; \($0)" } ?? "")]
        case (.range(let range, let note), .integer(let number)):
            guard !range.contains(number) else { return [] }
            let bounds = "\(range.lowerBound)..\(range.upperBound)" + (note.map { " (\($0))" } ?? "")
            return ["\(key): \(number), must be \(bounds)"]
        case (.atLeast(let minimum), .integer(let number)):
            return number >= minimum ? [] : ["\(key): \(number), must be at least \(minimum)"]
        case (.oneOf(let choices), .string(let text)):
            return choices.contains(text) ? [] : ["\(key): '\(text)', must be one of \(choices.joined(separator: ", "))"]
        case (.endpoint(let optional), .string(let text)):
            if text == "production" || text == "sandbox" || HostPort(text) != nil || (optional && text.isEmpty) { return [] }
            return ["\(key): '\(text)' is not production, sandbox or HOST:PORT"]
        case (.hostPortOrOff, .string(let text)):
            return text.isEmpty || HostPort(text) != nil ? [] : ["\(key): '\(text)' is not HOST:PORT (or \"\" to turn it off)"]
        case (.proxyOrEmpty, .string(let text)):
            if text.isEmpty || ProxyURL(text) != nil { return [] }
            if text.hasPrefix("http://"), text.dropFirst(7).prefix(while: { $0 != "@" }).contains(":") {
                return ["\(key): a password in the URL is refused; name the variable that holds it in apns.proxy_password_env"]
            }
            return ["\(key): '\(text)' is not http://[user@]host:port"]
        case (.readableFileOrEmpty, .string(let path)):
            return path.isEmpty ? [] : Self.fileProblems(path, key: key)
        case (.tokenGoneReasons, .strings(let reasons)):
            return reasons.filter { APNSReason(rawValue: $0).documentedStatus != 410 }.map {
                "\(key): '\($0)' is not a 410 reason (Unregistered, ExpiredToken); only those mean the token is dead"
            }
        default:
            preconditionFailure("rule \(self) does not apply to \(key)'s type")
        }
    }

    static func fileProblems(_ path: String, key: String) -> [String] {
        if FileManager.default.isReadableFile(atPath: path) { return [] }
        if FileManager.default.fileExists(atPath: path) { return ["\(key): cannot read '\(path)': permission denied"] }
        return ["\(key): cannot read '\(path)': no such file"]
    }
}
