import ArgumentParser
import Dispatch
import Foundation
import Logging
import PushlineAPNSCore
import PushlineAPNSMock
import PushlineTLS
import PushlineWorker

struct MockAPNSCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mock-apns",
        abstract: "An APNs emulator (HTTP/2 + TLS) for tests, demos, benchmarks and your own sender's tests.",
        discussion: "See docs/mock-apns.md for every flag with examples."
    )

    @Option(help: "HOST:PORT to listen on.") var listen = "127.0.0.1:2197"
    @Option(help: "Server certificate chain (PEM).") var tlsCert: String?
    @Option(help: "Server private key (PEM).") var tlsKey: String?
    @Option(help: "Generate ca.pem, server.pem and server.key into DIR and use them.") var selfSigned: String?
    @Option(help: "Accept JWTs of this key: KID:TEAM:PUBKEY.pem (repeatable). None = token auth off.")
    var authKey: [String] = []
    @Option(help: "Require client certificates signed by this CA (certificate trust).") var clientCA: String?
    @Option(help: "Allowed apns-topic (repeatable). None = any.") var topic: [String] = []
    @Option(help: "SETTINGS_MAX_CONCURRENT_STREAMS after the first valid token.") var maxStreams = 1000
    @Option(help: "Broadcast channels one app may have; one more is 400 CannotCreateChannelConfig (Apple: 10000).")
    var maxChannels = 10_000
    @Option(help: "Tokens answered 410 Unregistered (one hex token per line).") var unregisteredFile: String?
    @Option(help: "Also this fraction of all tokens, chosen by hashing the token.") var unregisteredFraction = 0.0
    @Option(help: "Response delay in milliseconds.") var latencyMs = 0
    @Option(help: "Random extra delay up to this many milliseconds.") var jitterMs = 0
    @Option(name: .customLong("rate-429"), help: "Fraction answered 429 TooManyRequests.") var rate429 = 0.0
    @Option(name: .customLong("rate-500"), help: "Fraction answered 500 InternalServerError.") var rate500 = 0.0
    @Option(name: .customLong("rate-503"), help: "Fraction answered 503 ServiceUnavailable.") var rate503 = 0.0
    @Option(help: "GOAWAY after N streams on a connection (0 = never).") var goawayEvery = 0
    @Option(help: "Abrupt TCP close after N streams on a connection (0 = never).") var closeEvery = 0
    @Option(help: "Lower MAX_CONCURRENT_STREAMS to 1 for a moment every N streams (0 = never).") var limitDropEvery = 0
    @Option(help: "How long a dropped limit stays at 1, in milliseconds.") var limitDropMs = 200
    @Option(help: "Close a connection idle this many seconds (0 = never).") var idleCloseSeconds = 0
    @Option(
        help: "End the connection with GOAWAY PROTOCOL_ERROR when a request for this device token arrives (repeatable)."
    )
    var protocolErrorToken: [String] = []
    @Option(
        help: "RST_STREAMs a client may send: BURST:PER_SECOND, then GOAWAY INTERNAL_ERROR (nghttp2's rapid-reset guard), or off."
    )
    var resetRateLimit = MockConfiguration.defaultResetRateLimit
    @Option(help: "Refuse every request with STATUS and {\"reason\":\"REASON\"} for SECONDS, then heal (e.g. 403:InvalidProviderToken:20).")
    var outage: String?
    @Option(help: "The outage starts at the Kth request (1 = the first; with a scope, the Kth it covers).")
    var outageAfterRequests = 1
    @Option(help: .init("Limit the outage to apns-topic TOPIC and TOPIC.* (one app); others are answered normally.", valueName: "TOPIC"))
    var outageTopic: String?
    @Option(help: .init("Limit the outage to provider tokens whose kid is KEYID (one of --auth-key).", valueName: "KEYID"))
    var outageKeyId: String?
    @Option(help: "JSON stats written periodically, on SIGUSR1 and on exit.") var statsFile: String?
    @Option(help: "Seconds between stats lines and stats-file writes.") var statsInterval = 5
    @Option(help: "One JSON line per request.") var record: String?
    @Flag(help: "Answer with an apns-unique-id header, as APNs' development environment does.") var uniqueIds = false
    @Option(help: "Event loops (0 = one per core).") var threads = 0
    @Option(help: "Seed for chaos and jitter.") var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
    @Option(help: "Log level.") var logLevel = "info"

    func run() async throws {
        PushlineLogging.bootstrap(level: logLevel, format: "auto")
        let logger = Logger(label: "pushline.mock-apns")
        // Signals are caught before the server starts, and so before either "listening" line (the
        // log's on stderr, ours on stdout): a SIGUSR1 sent as soon as a test or a script reads
        // one must write the stats, not kill the process. A SIGTERM during start-up waits here.
        let signals = SignalWaiter()
        var configuration = try makeConfiguration()
        var identity: CertifiedKey?
        if let selfSigned {
            do {
                identity = try SelfSignedIdentity.generate(into: selfSigned, host: configuration.host)
            } catch {
                throw ExitFailure.configuration(["--self-signed: \(error)"])
            }
            configuration.tlsCertificateFile = nil
            logger.info("self-signed certificate written", metadata: ["ca": "\(selfSigned)/ca.pem"])
        }
        let server: MockAPNSServer
        do {
            server = try await MockAPNSServer.start(configuration, identity: identity, logger: logger)
        } catch {
            // A certificate that does not load, a port in use, a record file that cannot be
            // opened: all are about the flags given.
            throw ExitFailure.configuration(["mock-apns: \(error)"])
        }
        FileHandle.standardOutput.write(Data("mock APNs listening on \(configuration.host):\(server.port)\n".utf8))

        let printer = Task {
            var previous = server.stats.snapshot()
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(max(1, statsInterval)))
                let current = server.stats.snapshot()
                let rate = Double(current.requests - previous.requests) / Double(max(1, statsInterval))
                logger.info(
                    "stats",
                    metadata: [
                        "requests": "\(current.requests)", "rate": "\(Int(rate))/s",
                        "by_status":
                            "\(current.byStatus.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","))",
                        "connections": "\(current.openConnections)", "max_open_streams": "\(current.maxOpenStreams)",
                        "limit_violations": "\(current.limitViolations)",
                    ]
                )
                previous = current
            }
        }
        for await signal in signals.events {
            if signal == SIGUSR1 {
                server.writeStats(logger: logger)
                continue
            }
            break
        }
        printer.cancel()
        try await server.shutdown()
        let final = server.stats.snapshot()
        print(final.json())
    }

    private func makeConfiguration() throws -> MockConfiguration {
        var problems: [String] = []
        var configuration = MockConfiguration()
        if let address = HostPort(listen, allowingPortZero: true) {
            configuration.host = address.host
            configuration.port = address.port
        } else {
            problems.append("--listen: '\(listen)' is not HOST:PORT")
        }
        if selfSigned == nil && (tlsCert == nil || tlsKey == nil) {
            problems.append("--tls-cert and --tls-key (or --self-signed DIR) are required: the mock speaks TLS only, like APNs")
        }
        configuration.tlsCertificateFile = tlsCert
        configuration.tlsKeyFile = tlsKey
        for spec in authKey {
            let parts = spec.split(separator: ":", maxSplits: 2).map(String.init)
            guard parts.count == 3 else {
                problems.append("--auth-key: '\(spec)' is not KID:TEAM:PUBKEY.pem")
                continue
            }
            do {
                let pem = try String(contentsOfFile: parts[2], encoding: .utf8)
                _ = try PublicKey(pemBytes: Array(pem.utf8))
                configuration.authKeys[parts[0]] = .init(keyID: parts[0], teamID: parts[1], publicKeyPEM: pem)
            } catch {
                problems.append("--auth-key: cannot load public key '\(parts[2])': \(error)")
            }
        }
        if let clientCA {
            if FileManager.default.isReadableFile(atPath: clientCA) {
                configuration.clientCAFile = clientCA
            } else {
                problems.append("--client-ca: cannot read '\(clientCA)'")
            }
        }
        configuration.topics = Set(topic)
        if maxStreams < 1 { problems.append("--max-streams: \(maxStreams), must be at least 1") }
        configuration.maxStreams = maxStreams
        if maxChannels < 0 { problems.append("--max-channels: \(maxChannels), must be at least 0") }
        configuration.maxChannels = maxChannels
        if let unregisteredFile {
            do {
                let lines = try String(contentsOfFile: unregisteredFile, encoding: .utf8)
                configuration.unregisteredTokens = Set(
                    lines.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                        .filter { !$0.isEmpty && !$0.hasPrefix("#") }
                )
            } catch {
                problems.append("--unregistered-file: cannot read '\(unregisteredFile)'")
            }
        }
        for (flag, value) in [
            ("--unregistered-fraction", unregisteredFraction), ("--rate-429", rate429), ("--rate-500", rate500),
            ("--rate-503", rate503),
        ] where !(0...1).contains(value) {
            problems.append("\(flag): \(value), must be between 0 and 1")
        }
        if rate429 + rate500 + rate503 > 1 { problems.append("--rate-429 + --rate-500 + --rate-503: more than 1") }
        configuration.unregisteredFraction = unregisteredFraction
        configuration.latencyMilliseconds = max(0, latencyMs)
        configuration.jitterMilliseconds = max(0, jitterMs)
        configuration.rate429 = rate429
        configuration.rate500 = rate500
        configuration.rate503 = rate503
        configuration.goawayEvery = max(0, goawayEvery)
        configuration.closeEvery = max(0, closeEvery)
        configuration.limitDropEvery = max(0, limitDropEvery)
        configuration.limitDropMilliseconds = max(1, limitDropMs)
        configuration.idleCloseSeconds = max(0, idleCloseSeconds)
        configuration.protocolErrorTokens = Set(protocolErrorToken.map { $0.lowercased() })
        do {
            try configuration.setResetRateLimit(parsing: resetRateLimit)
        } catch {
            problems.append("--reset-rate-limit: \(error)")
        }
        if let outage {
            do {
                try OutageSpec(parsing: outage).apply(to: &configuration)
            } catch {
                problems.append("--outage: \(error)")
            }
        }
        if outageAfterRequests < 1 {
            problems.append("--outage-after-requests: \(outageAfterRequests), must be at least 1")
        }
        configuration.outageStartAfterRequests = outageAfterRequests
        configuration.outageTopic = outageTopic
        configuration.outageKeyID = outageKeyId
        problems.append(contentsOf: configuration.outageScopeProblems)
        configuration.statsFile = statsFile
        configuration.statsIntervalSeconds = max(1, statsInterval)
        configuration.recordFile = record
        configuration.uniqueIDs = uniqueIds
        configuration.threads = max(0, threads)
        configuration.seed = seed
        guard problems.isEmpty else { throw ExitFailure.configuration(problems) }
        return configuration
    }
}
