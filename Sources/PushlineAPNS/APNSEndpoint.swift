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
    /// Apple's broadcast channel-management hosts (iOS 18), one per environment.
    public static let productionChannels = APNSEndpoint(host: "api-manage-broadcast.push.apple.com", port: 2196)
    public static let sandboxChannels = APNSEndpoint(host: "api-manage-broadcast.sandbox.push.apple.com", port: 2195)

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

    /// `production`, `sandbox` (Apple's channel-management hosts) or `HOST:PORT`; nil for
    /// anything else.
    public init?(channels text: String) {
        switch text {
        case "production": self = .productionChannels
        case "sandbox", "development": self = .sandboxChannels
        default:
            guard let address = HostPort(text) else { return nil }
            self.init(host: address.host, port: address.port)
        }
    }

    /// The APNs environment this endpoint is: `production`, `sandbox`, or `custom` for any other
    /// HOST:PORT (a mock, a proxy). Apple's channel-management hosts count as their environment.
    public var environment: String {
        switch self {
        case .production, .productionChannels: "production"
        case .sandbox, .sandboxChannels: "sandbox"
        default: "custom"
        }
    }

    /// Where this push endpoint's environment manages broadcast channels: Apple's channel host of
    /// the same environment; a custom endpoint (a mock) serves both APIs itself.
    public var channelManagement: APNSEndpoint {
        switch environment {
        case "production": .productionChannels
        case "sandbox": .sandboxChannels
        default: self
        }
    }

    /// The `:authority` of requests.
    public var authority: String {
        port == 443 ? host : (host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")
    }

    public var description: String { HostPort(host: host, port: port).description }
}
