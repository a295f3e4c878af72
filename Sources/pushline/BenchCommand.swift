import ArgumentParser

struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "The end-to-end benchmark (run scripts/bench, which drives the broker, the mock and h2load)."
    )

    func run() async throws {
        var standardError = StandardError()
        print("pushline bench: use scripts/bench (it starts the embedded broker, the mock and h2load around the worker)", to: &standardError)
        throw ExitCode(2)
    }
}
