import ArgumentParser

/// Thrown by subcommands whose implementation has not landed yet: exit code 2, with a clear message.
struct NotBuiltYet: Error, CustomStringConvertible {
    var command: String
    var description: String { "pushline \(command): not built yet in this version of Pushline" }
}

extension ParsableCommand {
    static func notBuiltYet(_ name: String) -> ExitCode {
        var standardError = StandardError()
        print(NotBuiltYet(command: name).description, to: &standardError)
        return ExitCode(2)
    }
}
