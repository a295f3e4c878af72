import ArgumentParser

struct EnqueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enqueue",
        abstract: "produce NDJSON jobs to the jobs topic."
    )

    mutating func run() async throws {
        throw Self.notBuiltYet("enqueue")
    }
}
