/// The `--outage STATUS:REASON:SECONDS` flag of `pushline mock-apns`, checked: a status APNs
/// answers failures with (400–599), a reason that fits in `{"reason":"..."}` as it is (letters
/// and digits, like APNs' own), and a duration of at least 0 seconds (0 = no outage).
public struct OutageSpec: Sendable, Hashable {
    public var status: Int
    public var reason: String
    public var seconds: Double

    public init(status: Int, reason: String, seconds: Double) {
        self.status = status
        self.reason = reason
        self.seconds = seconds
    }

    /// Parses `STATUS:REASON:SECONDS`, e.g. `403:InvalidProviderToken:20`; the error says which
    /// part is wrong.
    public init(parsing text: String) throws(MockError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 else {
            throw MockError("'\(text)' is not STATUS:REASON:SECONDS (e.g. 403:InvalidProviderToken:20)")
        }
        guard let status = Int(parts[0]), (400...599).contains(status) else {
            throw MockError("'\(text)': status '\(parts[0])' is not an HTTP status from 400 to 599")
        }
        let reason = parts[1]
        guard !reason.isEmpty, reason.utf8.allSatisfy(Self.isReasonByte) else {
            throw MockError("'\(text)': reason '\(reason)' must be letters and digits, like APNs' (e.g. ServiceUnavailable)")
        }
        guard let seconds = Double(parts[2]), seconds.isFinite, seconds >= 0 else {
            throw MockError("'\(text)': seconds '\(parts[2])' is not a number of seconds, 0 or more")
        }
        self.init(status: status, reason: reason, seconds: seconds)
    }

    /// Sets the configuration's outage to this one (the start request is left as it is).
    public func apply(to configuration: inout MockConfiguration) {
        configuration.outageStatus = status
        configuration.outageReason = reason
        configuration.outageSeconds = seconds
    }

    private static func isReasonByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
