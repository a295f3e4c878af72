import Foundation
import PushlineAPNS
import Testing

@testable import PushlineWorker

/// Where `pushline channels` manages an app's channels: Apple's channel host of the app's push
/// environment unless a key says otherwise, and the validator's word on those keys.
@Suite struct ChannelsEndpointTests {
    func configuration(
        apns endpoint: String,
        app appEndpoint: String = "",
        global: String = "",
        perApp: String = ""
    ) -> PushlineConfiguration {
        var configuration = PushlineConfiguration()
        configuration.apns.endpoint = endpoint
        configuration.apns.channelsEndpoint = global
        var app = PushlineConfiguration.App(bundleID: "com.example.app", auth: .token(keyFile: "k", keyID: "K", teamID: "T"))
        app.endpoint = appEndpoint
        app.channelsEndpoint = perApp
        configuration.apps["default"] = app
        return configuration
    }

    func resolved(_ configuration: PushlineConfiguration) -> String? {
        configuration.channelsEndpoint(app: "default").map { "\($0.endpoint) \($0.key)" }
    }

    @Test func theDefaultFollowsThePushEnvironment() {
        #expect(resolved(configuration(apns: "production")) == "api-manage-broadcast.push.apple.com:2196 apns.endpoint")
        #expect(resolved(configuration(apns: "sandbox")) == "api-manage-broadcast.sandbox.push.apple.com:2195 apns.endpoint")
        #expect(
            resolved(configuration(apns: "production", app: "sandbox"))
                == "api-manage-broadcast.sandbox.push.apple.com:2195 apps.default.endpoint"
        )
        // A HOST:PORT push endpoint (the mock) serves both APIs; so does Apple's host by name.
        #expect(resolved(configuration(apns: "127.0.0.1:2197")) == "127.0.0.1:2197 apns.endpoint")
        #expect(resolved(configuration(apns: "api.push.apple.com:443")) == "api-manage-broadcast.push.apple.com:2196 apns.endpoint")
        #expect(configuration(apns: "production").channelsEndpoint(app: "nope") == nil)
    }

    @Test func theKeysOverrideItAppFirst() {
        #expect(resolved(configuration(apns: "production", global: "10.0.0.1:2196")) == "10.0.0.1:2196 apns.channels_endpoint")
        #expect(
            resolved(configuration(apns: "production", global: "10.0.0.1:2196", perApp: "production"))
                == "api-manage-broadcast.push.apple.com:2196 apps.default.channels_endpoint"
        )
        #expect(
            resolved(configuration(apns: "sandbox", perApp: "sandbox"))
                == "api-manage-broadcast.sandbox.push.apple.com:2195 apps.default.channels_endpoint"
        )
    }

    @Test func channelsOfTheOtherEnvironmentOrACustomOneWithoutCAAreProblems() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushline-channels-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("AuthKey.p8").path
        try "key".write(toFile: key, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
        func problems(_ configuration: PushlineConfiguration) -> [String] {
            var configuration = configuration
            configuration.apps["default"]?.keyFile = key
            return ConfigurationValidator.problems(in: configuration, environment: [:])
        }
        #expect(problems(configuration(apns: "production")) == [])
        #expect(
            problems(configuration(apns: "production", perApp: "sandbox")) == [
                "apps.default.channels_endpoint: sandbox channels, but apps.default pushes to production; "
                    + "channels exist per environment (leave it \"\" to follow the app's endpoint)"
            ]
        )
        #expect(
            problems(configuration(apns: "production", global: "127.0.0.1:2196")) == [
                "apns.channels_endpoint: a custom endpoint ('127.0.0.1:2196') needs apns.ca_file to verify it (TLS is never switched off)"
            ]
        )
        #expect(
            problems(configuration(apns: "sandbox", global: "staging")) == [
                "apns.channels_endpoint: 'staging' is not production, sandbox or HOST:PORT"
            ]
        )
    }
}
