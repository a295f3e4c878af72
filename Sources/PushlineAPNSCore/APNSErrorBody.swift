/// Reads and writes APNs' error body, `{"reason":"...","timestamp":1234}`.
public enum APNSErrorBody {
    /// The reason and timestamp from `body`; nil fields where absent or malformed.
    public static func parse(_ body: some Collection<UInt8>) -> (reason: String?, timestamp: Int64?) {
        // A success has no body: nothing to read, nothing to allocate.
        guard !body.isEmpty else { return (nil, nil) }
        let fields = JSONScanner.stringAndIntegerFields(Array(body))
        return (fields.strings["reason"], fields.integers["timestamp"])
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
