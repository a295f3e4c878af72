import ArgumentParser
import NIOPosix
import PushlineAPNS
import PushlineAPNSCore
import PushlineWorker

struct ChannelsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "channels",
        abstract: "Manage an app's broadcast channels (iOS 18 Live Activities) through Apple's channel-management API.",
        discussion: """
            create prints the new channel's id; get prints the id and its storage policy \
            (ID message-storage-policy=N); list prints every id of the app, one a line; delete \
            prints the deleted id. The channel host follows the app's endpoint (production: \
            api-manage-broadcast.push.apple.com:2196, sandbox: …sandbox…:2195, HOST:PORT: the same \
            server) unless apps.NAME.channels_endpoint or apns.channels_endpoint says otherwise. \
            Exit 2 with Apple's status and reason when APNs refuses, 2 for bad arguments or \
            configuration, 1 when APNs could not be reached.
            """
    )

    enum Action: String, ExpressibleByArgument, CaseIterable {
        case create, get, list, delete
    }

    @Argument(help: "create, get, list or delete.") var action: Action

    @Option(name: .long, help: "The YAML configuration file (see docs/configuration.md).")
    var config: String?

    @Option(name: .long, help: "The app profile (a key of apps).") var app = "default"

    @Option(name: .long, help: "create: 0 = no message stored (apns-expiration must be 0), 1 = the most recent one stored.")
    var storagePolicy: Int?

    @Option(name: .long, help: "get, delete: the channel's id, as create printed it.") var channelID: String?

    func validate() throws {
        var problems: [String] = []
        switch action {
        case .get, .delete:
            if channelID?.isEmpty ?? true { problems.append("--channel-id: required by \(action.rawValue)") }
        case .create, .list:
            if channelID != nil { problems.append("--channel-id: not used by \(action.rawValue)") }
        }
        if let storagePolicy {
            if action != .create { problems.append("--storage-policy: only create takes it") }
            if APNSChannelStoragePolicy(rawValue: storagePolicy) == nil {
                problems.append("--storage-policy: \(storagePolicy), must be 0 or 1")
            }
        }
        // A validation failure: the command exits 2 with the usage (PushlineCommand.main).
        guard problems.isEmpty else { throw ValidationError(problems.joined(separator: "\n")) }
    }

    func run() async throws {
        let configuration = try await loadConfiguration(file: config, kafkaOnly: false)
        PushlineLogging.bootstrap(level: "warning", format: "auto")
        guard configuration.apps[app] != nil else {
            let known = configuration.apps.keys.sorted().joined(separator: ", ")
            throw ExitFailure.configuration(["--app: '\(app)' is not in the configuration's apps (\(known))"])
        }
        let operation: APNSChannelOperation =
            switch action {
            case .create: .create(storagePolicy: storagePolicy.flatMap(APNSChannelStoragePolicy.init(rawValue:)) ?? .mostRecentMessage)
            case .get: .get(channelID: channelID ?? "")
            case .delete: .delete(channelID: channelID ?? "")
            case .list: .list
            }

        let client: APNSChannelClient
        do {
            client = try APNSClients.channelClient(configuration, app: app, group: MultiThreadedEventLoopGroup.singleton)
        } catch let problems as ConfigurationProblems {
            throw ExitFailure.configuration(problems.problems)
        }
        let answer: APNSChannelAnswer
        do {
            answer = try await client.perform(operation)
        } catch {
            await client.close()
            var standardError = StandardError()
            print("channels \(action.rawValue): no answer from \(client.endpoint): \(error)", to: &standardError)
            throw ExitCode(1)
        }
        await client.close()

        switch answer {
        case .created(let channelID):
            print(channelID)
        case .channel(let policy):
            print("\(channelID ?? "") message-storage-policy=\(policy.rawValue)")
        case .channels(let channels):
            for channel in channels { print(channel) }
        case .deleted:
            print(channelID ?? "")
        case .refused(let status, let reason):
            // Apple's word, verbatim: the caller may act on the reason (ChannelNotRegistered,
            // CannotCreateChannelConfig, ...).
            throw ExitFailure.configuration([
                "channels \(action.rawValue): APNs refused (\(client.endpoint)): \(status) \(reason?.rawValue ?? "(no reason)")"
            ])
        }
    }
}
