/// A `HOST:PORT` pair (`[v6]:port` too), as configuration and flags write endpoints.
public struct HostPort: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT` (`[v6]:PORT` too); nil when either part is missing or the port is not
    /// 1..65535 (0..65535 with `allowingPortZero`, for "any free port").
    public init?(_ text: String, allowingPortZero: Bool = false) {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
        }
        guard !host.isEmpty, let port = Int(text[text.index(after: colon)...]),
            ((allowingPortZero ? 0 : 1)...65535).contains(port)
        else {
            return nil
        }
        self.host = host
        self.port = port
    }

    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
