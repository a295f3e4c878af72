import ArgumentParser

struct MockAPNSCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mock-apns",
        abstract: "an APNs emulator (HTTP/2 + TLS) for tests, demos and benchmarks."
    )

    mutating func run() async throws {
        throw Self.notBuiltYet("mock-apns")
    }
}
