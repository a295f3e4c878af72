import ArgumentParser

/// The `pushline` executable: the worker and its companion tools (see ../shared/CONTRACT.md).
@main
struct PushlineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushline",
        abstract: "A high-volume Apple push gateway: Kafka jobs in, APNs over HTTP/2, results out.",
        subcommands: [
            RunCommand.self,
            MockAPNSCommand.self,
            EnqueueCommand.self,
            BenchCommand.self,
            JWTCommand.self,
        ]
    )
}
