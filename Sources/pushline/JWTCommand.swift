import ArgumentParser

struct JWTCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jwt",
        abstract: "print an APNs provider token."
    )

    mutating func run() async throws {
        throw Self.notBuiltYet("jwt")
    }
}
