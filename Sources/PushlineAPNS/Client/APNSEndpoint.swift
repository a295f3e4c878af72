import PushlineAPNSCore

/// Where an APNs pool connects: Apple's production or sandbox service (on port 443, or on Apple's
/// alternative port 2197 for networks that block 443 outbound), or HOST:PORT (the mock).
public struct APNSEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public static let production = APNSEndpoint(host: "api.push.apple.com", port: 443)
    public static let sandbox = APNSEndpoint(host: "api.sandbox.push.apple.com", port: 443)
    /// Apple's alternative port for the same services (for networks that block 443 outbound).
    public static let alternativePort = 2197
    /// Apple's broadcast channel-management hosts (iOS 18), one per environment.
    public static let productionChannels = APNSEndpoint(host: "api-manage-broadcast.push.apple.com", port: 2196)
    public static let sandboxChannels = APNSEndpoint(host: "api-manage-broadcast.sandbox.push.apple.com", port: 2195)

    /// `production`, `sandbox` (each optionally `:2197`, Apple's alternative port) or
    /// `HOST:PORT`; nil for anything else.
    public init?(_ text: String) {
        switch text {
        case "production": self = .production
        case "sandbox", "development": self = .sandbox
        case "production:\(Self.alternativePort)": self.init(host: Self.production.host, port: Self.alternativePort)
        case "sandbox:\(Self.alternativePort)", "development:\(Self.alternativePort)":
            self.init(host: Self.sandbox.host, port: Self.alternativePort)
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
    /// HOST:PORT (a mock, a proxy). Apple's push hosts count as their environment on 443 and on
    /// 2197 (however the endpoint was written), and its channel-management hosts on their ports.
    public var environment: String {
        switch self {
        case .production, .productionChannels: return "production"
        case .sandbox, .sandboxChannels: return "sandbox"
        default:
            guard port == Self.alternativePort else { return "custom" }
            switch host.lowercased() {
            case Self.production.host: return "production"
            case Self.sandbox.host: return "sandbox"
            default: return "custom"
            }
        }
    }

    /// Whether this is one of Apple's own hosts, whose certificates the system trust store
    /// verifies (no `apns.ca_file` needed).
    public var isApple: Bool { environment != "custom" }

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
