import ArgumentParser

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "the worker: consume jobs, send to APNs, publish results, commit offsets."
    )

    mutating func run() async throws {
        throw Self.notBuiltYet("run")
    }
}
