import ArgumentParser

/// The `pushline` executable: the worker and its companion tools (see the contract in docs/).
@main
struct PushlineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushline",
        abstract: "A high-volume Apple push gateway: Kafka jobs in, APNs over HTTP/2, results out.",
        subcommands: [
            RunCommand.self,
            MockAPNSCommand.self,
            EnqueueCommand.self,
            CancelCommand.self,
            JWTCommand.self,
            ChannelsCommand.self,
        ]
    )

    /// Maps the commands' failures to the contract's exit codes: 2 for bad configuration or
    /// arguments (every problem printed), 1 for anything else.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch ExitFailure.configuration(let lines) {
            Self.exit(withError: ExitFailure.report(lines))
        } catch {
            if Self.exitCode(for: error) == .validationFailure {
                // The contract: bad arguments exit 2, with the message naming the problem.
                var standardError = StandardError()
                print(Self.fullMessage(for: error), to: &standardError)
                Self.exit(withError: ExitCode(2))
            }
            Self.exit(withError: error)
        }
    }
}
