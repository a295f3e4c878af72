import Foundation
import NIOCore
import PushlineAPNS
import PushlineAPNSCore
import PushlineTLS

/// Builds one APNs client pool per configured app, all on one shared group of event loops, and
/// an app's channel-management client.
public enum APNSClients {
    /// `outcomeScope` wraps each run of outcomes a client hands out (the result publisher's batch).
    static func make(
        _ configuration: PushlineConfiguration,
        group: any EventLoopGroup,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        outcomeScope: (any APNSOutcomeScope)? = nil
    ) throws -> [String: APNSClient] {
        var clients: [String: APNSClient] = [:]
        for (name, app) in configuration.apps.sorted(by: { $0.key < $1.key }) {
            let endpointText = app.endpoint.isEmpty ? configuration.apns.endpoint : app.endpoint
            guard let endpoint = APNSEndpoint(endpointText) else {
                throw ConfigurationProblems(["apps.\(name).endpoint: '\(endpointText)' is not production, sandbox or HOST:PORT"])
            }
            let credential = try Self.credential(app, name: name, environment: environment)
            let apns = configuration.apns
            let proxy = Self.proxy(app, configuration: configuration, environment: environment)
            let clientConfiguration = APNSClientConfiguration(
                endpoint: endpoint,
                proxy: proxy,
                caFile: apns.caFile.isEmpty ? nil : apns.caFile,
                connections: apns.connections,
                connectSpacing: .milliseconds(apns.connectSpacingMilliseconds),
                maxStreamsPerConnection: apns.maxStreamsPerConnection,
                requestTimeout: .milliseconds(apns.requestTimeoutMilliseconds),
                retryPolicy: RetryPolicy(maxAttempts: apns.maxAttempts),
                pingTimeout: .milliseconds(apns.pingTimeoutMilliseconds),
                name: name,
                health: AppHealth.Thresholds(
                    minimumSystemic: apns.holdMinimumSystemic,
                    ratio: Double(apns.holdPercent) / 100,
                    holdLimit: .milliseconds(apns.holdLimitMilliseconds)
                ),
                maxRate: app.maxRate
            )
            do {
                clients[name] = try APNSClient(
                    configuration: clientConfiguration,
                    credential: credential,
                    group: group,
                    outcomeScope: outcomeScope
                )
            } catch {
                throw ConfigurationProblems(["apps.\(name): cannot set up TLS for \(endpoint): \(error)"])
            }
        }
        return clients
    }

    /// The channel-management client of app `name` (`pushline channels`): its channel endpoint
    /// (`PushlineConfiguration.channelsEndpoint(app:)`), credential, proxy and CA, as its pool's.
    public static func channelClient(
        _ configuration: PushlineConfiguration,
        app name: String,
        group: any EventLoopGroup,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> APNSChannelClient {
        guard let app = configuration.apps[name], let (endpoint, key) = configuration.channelsEndpoint(app: name) else {
            throw ConfigurationProblems(["apps.\(name): no such app, or no channel endpoint for it"])
        }
        let credential = try Self.credential(app, name: name, environment: environment)
        let apns = configuration.apns
        do {
            return try APNSChannelClient(
                endpoint: endpoint,
                bundleID: app.bundleID,
                credential: credential,
                proxy: Self.proxy(app, configuration: configuration, environment: environment),
                caFile: apns.caFile.isEmpty ? nil : apns.caFile,
                requestTimeout: .milliseconds(apns.requestTimeoutMilliseconds),
                group: group
            )
        } catch {
            throw ConfigurationProblems(["\(key): cannot set up TLS for \(endpoint): \(error)"])
        }
    }

    /// The app's credential, loaded (a `.p8` that does not load is a configuration problem).
    static func credential(_ app: PushlineConfiguration.App, name: String, environment: [String: String]) throws -> APNSCredential {
        switch app.auth {
        case .token(let keyFile, let keyID, let teamID):
            do {
                return try APNSCredential.token(keyFile: keyFile, keyID: keyID, teamID: teamID)
            } catch {
                throw ConfigurationProblems(["apps.\(name).auth.key_file: cannot load '\(keyFile)': \(error)"])
            }
        case .certificatePEM(let certFile, let keyFile):
            return .certificate(.pemFiles(certificateChain: certFile, privateKey: keyFile, password: nil))
        case .certificatePKCS12(let p12File, let variable):
            let password = variable.isEmpty ? "" : (environment[variable] ?? "")
            return .certificate(.pkcs12File(p12File, password: password))
        }
    }

    /// The proxy the app's connections tunnel through (`proxy`, else `apns.proxy`), or nil.
    static func proxy(_ app: PushlineConfiguration.App, configuration: PushlineConfiguration, environment: [String: String]) -> APNSProxy? {
        let apns = configuration.apns
        let proxyText = app.proxy.isEmpty ? apns.proxy : app.proxy
        return ProxyURL(proxyText)?.apnsProxy(
            password: apns.proxyPasswordEnvironmentVariable.isEmpty ? nil : environment[apns.proxyPasswordEnvironmentVariable]
        )
    }
}
