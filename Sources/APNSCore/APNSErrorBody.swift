/// Reads and writes APNs' error body, `{"reason":"...","timestamp":1234}`.
public enum APNSErrorBody {
    /// The reason and timestamp from `body`; nil fields where absent or malformed.
    public static func parse(_ body: some Collection<UInt8>) -> (reason: String?, timestamp: Int64?) {
        guard !body.isEmpty else { return (nil, nil) }
        let fields = FlatJSON.fields(body)
        var reason: String?
        var timestamp: Int64?
        if case .string(let value)? = fields["reason"] { reason = value }
        if case .number(let value)? = fields["timestamp"] { timestamp = value }
        return (reason, timestamp)
    }

    /// The body APNs sends for `reason` (with `timestamp` for 410).
    public static func make(reason: String, timestamp: Int64? = nil) -> String {
        var body = "{\"reason\":\"" + reason + "\""
        if let timestamp {
            body += ",\"timestamp\":" + String(timestamp)
        }
        return body + "}"
    }
}
