import ArgumentParser

struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "the end-to-end benchmark."
    )

    mutating func run() async throws {
        throw Self.notBuiltYet("bench")
    }
}
