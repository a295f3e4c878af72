import PushlineAPNSCore

/// Where an APNs pool connects: Apple's production or sandbox service, or HOST:PORT (the mock).
public struct APNSEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public static let production = APNSEndpoint(host: "api.push.apple.com", port: 443)
    public static let sandbox = APNSEndpoint(host: "api.sandbox.push.apple.com", port: 443)

    /// `production`, `sandbox` or `HOST:PORT`; nil for anything else.
    public init?(_ text: String) {
        switch text {
        case "production": self = .production
        case "sandbox", "development": self = .sandbox
        default:
            guard let address = HostPort(text) else { return nil }
            self.init(host: address.host, port: address.port)
        }
    }

    /// The APNs environment this endpoint is: `production`, `sandbox`, or `custom` for any other
    /// HOST:PORT (a mock, a proxy).
    public var environment: String {
        switch self {
        case .production: "production"
        case .sandbox: "sandbox"
        default: "custom"
        }
    }

    /// The `:authority` of requests.
    public var authority: String {
        port == 443 ? host : (host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")
    }

    public var description: String { HostPort(host: host, port: port).description }
}
