import PushlineAPNS
import Testing

@testable import PushlineWorker

/// Apple's alternative port (2197, for networks that block 443 outbound) is Apple's service all
/// the same: its environment, its trust store, its channel hosts.
@Suite struct APNSEndpointTests {
    @Test func theAlternativePortKeepsAppleEnvironment() throws {
        let production = try #require(APNSEndpoint("production:2197"))
        #expect(production.host == "api.push.apple.com" && production.port == 2197)
        #expect(production.environment == "production")
        #expect(production.isApple)
        #expect(production.authority == "api.push.apple.com:2197")
        #expect(production.channelManagement == .productionChannels)

        let sandbox = try #require(APNSEndpoint("sandbox:2197"))
        #expect(sandbox.host == "api.sandbox.push.apple.com" && sandbox.port == 2197)
        #expect(sandbox.environment == "sandbox")
        #expect(APNSEndpoint("development:2197") == sandbox)

        // Written out as HOST:PORT, Apple's hosts are still Apple's (any case).
        #expect(APNSEndpoint("api.push.apple.com:2197")?.environment == "production")
        #expect(APNSEndpoint("API.Sandbox.Push.Apple.com:2197")?.environment == "sandbox")
        #expect(APNSEndpoint("api.push.apple.com:443")?.environment == "production")
    }

    @Test func otherHostsAndPortsStayCustom() {
        #expect(APNSEndpoint("api.push.apple.com:8443")?.environment == "custom")
        #expect(APNSEndpoint("127.0.0.1:2197")?.environment == "custom")
        #expect(APNSEndpoint("127.0.0.1:2197")?.isApple == false)
        #expect(APNSEndpoint("production:2198")?.environment == "custom")
    }

    @Test func theAlternativePortNeedsNoCAFile() {
        var configuration = PushlineConfiguration()
        configuration.apps["default"] = PushlineConfiguration.App(
            bundleID: "com.example.app",
            auth: .token(keyFile: "/nonexistent", keyID: "K", teamID: "T")
        )
        for endpoint in ["production:2197", "sandbox:2197", "api.push.apple.com:2197"] {
            configuration.apns.endpoint = endpoint
            let problems = ConfigurationValidator.problems(in: configuration, environment: [:])
            #expect(!problems.contains { $0.contains("ca_file") }, "\(endpoint): \(problems)")
        }
        configuration.apns.endpoint = "127.0.0.1:2197"
        let custom = ConfigurationValidator.problems(in: configuration, environment: [:])
        #expect(custom.contains { $0.contains("needs apns.ca_file") }, "\(custom)")
    }
}
