import Foundation
import NIOCore
import PushlineAPNS
import PushlineAPNSCore
import PushlineTLS

/// Builds one APNs client pool per configured app, all on one shared group of event loops.
enum APNSClients {
    static func make(
        _ configuration: PushlineConfiguration,
        group: any EventLoopGroup,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> [String: APNSClient] {
        var clients: [String: APNSClient] = [:]
        for (name, app) in configuration.apps.sorted(by: { $0.key < $1.key }) {
            let endpointText = app.endpoint.isEmpty ? configuration.apns.endpoint : app.endpoint
            guard let endpoint = APNSEndpoint(endpointText) else {
                throw ConfigurationProblems(["apps.\(name).endpoint: '\(endpointText)' is not production, sandbox or HOST:PORT"])
            }
            let credential: APNSCredential
            switch app.auth {
            case .token(let keyFile, let keyID, let teamID):
                do {
                    credential = try APNSCredential.token(keyFile: keyFile, keyID: keyID, teamID: teamID)
                } catch {
                    throw ConfigurationProblems(["apps.\(name).auth.key_file: cannot load '\(keyFile)': \(error)"])
                }
            case .certificatePEM(let certFile, let keyFile):
                credential = .certificate(.pemFiles(certificateChain: certFile, privateKey: keyFile, password: nil))
            case .certificatePKCS12(let p12File, let variable):
                let password = variable.isEmpty ? "" : (environment[variable] ?? "")
                credential = .certificate(.pkcs12File(p12File, password: password))
            }
            let apns = configuration.apns
            let proxyText = app.proxy.isEmpty ? apns.proxy : app.proxy
            let proxy = ProxyURL(proxyText)?.apnsProxy(
                password: apns.proxyPasswordEnvironmentVariable.isEmpty ? nil : environment[apns.proxyPasswordEnvironmentVariable]
            )
            let clientConfiguration = APNSClientConfiguration(
                endpoint: endpoint,
                proxy: proxy,
                caFile: apns.caFile.isEmpty ? nil : apns.caFile,
                connections: apns.connections,
                maxStreamsPerConnection: apns.maxStreamsPerConnection,
                requestTimeout: .milliseconds(apns.requestTimeoutMilliseconds),
                retryPolicy: RetryPolicy(maxAttempts: apns.maxAttempts),
                name: name,
                health: AppHealth.Thresholds(
                    minimumSystemic: apns.holdMinimumSystemic,
                    ratio: Double(apns.holdPercent) / 100,
                    holdLimit: .milliseconds(apns.holdLimitMilliseconds)
                ),
                maxRate: app.maxRate
            )
            do {
                clients[name] = try APNSClient(configuration: clientConfiguration, credential: credential, group: group)
            } catch {
                throw ConfigurationProblems(["apps.\(name): cannot set up TLS for \(endpoint): \(error)"])
            }
        }
        return clients
    }
}
