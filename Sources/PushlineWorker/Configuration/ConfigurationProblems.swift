/// Every problem found in a configuration, one line each, naming the key.
public struct ConfigurationProblems: Error, Sendable, Hashable, CustomStringConvertible {
    public var problems: [String]

    public init(_ problems: [String]) {
        self.problems = problems
    }

    public var description: String {
        problems.joined(separator: "\n")
    }
}
