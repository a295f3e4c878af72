// pushline-bench: micro-benchmarks for the parts of Pushline (run by scripts/bench).
//
//   pushline-bench transport --connections 4 --streams 100 --seconds 5
//       our HTTP/2 client against our HTTP/2 server over TLS on loopback, closed loop
//   pushline-bench serve --seconds 30
//       only the server (prints "port N"), for h2load to drive
//   pushline-bench decode --iterations 200000
//       job decoding, ns per job, for jobs of 1 and of 100 tokens
//   pushline-bench fuzz --count 1000000
//       the job decoder on mutated jobs: every one decoded or rejected with a reason
//   pushline-bench apns --endpoint 127.0.0.1:PORT --ca-file F --key-file F --key-id K --team-id T [--count N] [--connections N]
//       the APNs client alone (no Kafka) against a running mock
//
// Missing or bad arguments print the usage and exit 2; a benchmark that fails exits 1.
import Foundation
import PushlineAPNS

let usage = """
    usage: pushline-bench transport [--connections N] [--streams N] [--seconds N]
           pushline-bench serve [--seconds N]
           pushline-bench decode [--iterations N]
           pushline-bench fuzz [--count N]
           pushline-bench apns --endpoint HOST:PORT --ca-file FILE --key-file FILE --key-id KEY --team-id TEAM
                               [--count N] [--connections N]
    """

/// A subcommand and its `--name value` options, checked against what the subcommand takes.
struct BenchArguments {
    struct UsageError: Error {
        var message: String
    }

    static let options: [String: Set<String>] = [
        "transport": ["connections", "streams", "seconds"],
        "serve": ["seconds"],
        "decode": ["iterations"],
        "fuzz": ["count"],
        "apns": ["endpoint", "ca-file", "key-file", "key-id", "team-id", "count", "connections"],
    ]

    let command: String
    private var values: [String: String] = [:]

    init(_ arguments: [String]) throws(UsageError) {
        guard let command = arguments.first else { throw UsageError(message: "no benchmark named") }
        guard let allowed = Self.options[command] else { throw UsageError(message: "unknown benchmark '\(command)'") }
        self.command = command
        var rest = arguments.dropFirst()
        while let flag = rest.popFirst() {
            guard flag.hasPrefix("--"), allowed.contains(String(flag.dropFirst(2))) else {
                throw UsageError(message: "\(command): unknown option '\(flag)'")
            }
            guard let value = rest.popFirst() else { throw UsageError(message: "\(command): \(flag) needs a value") }
            values[String(flag.dropFirst(2))] = value
        }
    }

    /// A positive integer option, or `fallback` when absent.
    func int(_ name: String, default fallback: Int) throws(UsageError) -> Int {
        guard let text = values[name] else { return fallback }
        guard let value = Int(text), value > 0 else {
            throw UsageError(message: "\(command): --\(name) '\(text)' is not a positive integer")
        }
        return value
    }

    func string(_ name: String) throws(UsageError) -> String {
        guard let value = values[name], !value.isEmpty else { throw UsageError(message: "\(command): --\(name) is required") }
        return value
    }
}

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("pushline-bench: \(message)\n".utf8))
    exit(status)
}

let arguments: BenchArguments
do {
    arguments = try BenchArguments(Array(CommandLine.arguments.dropFirst()))
} catch {
    fail("\(error.message)\n\(usage)", status: 2)
}

do {
    switch arguments.command {
    case "transport":
        print(
            try await TransportBenchmark.run(
                connections: arguments.int("connections", default: 1),
                streams: arguments.int("streams", default: 100),
                seconds: arguments.int("seconds", default: 5)
            )
        )
    case "serve":
        try await TransportBenchmark.serve(seconds: arguments.int("seconds", default: 30))
    case "apns":
        let endpointText = try arguments.string("endpoint")
        guard let endpoint = APNSEndpoint(endpointText) else {
            throw BenchArguments.UsageError(message: "apns: --endpoint '\(endpointText)' is not HOST:PORT")
        }
        print(
            try await APNSBenchmark.run(
                endpoint: endpoint,
                caFile: arguments.string("ca-file"),
                keyFile: arguments.string("key-file"),
                keyID: arguments.string("key-id"),
                teamID: arguments.string("team-id"),
                count: arguments.int("count", default: 200_000),
                connections: arguments.int("connections", default: 4)
            )
        )
    case "fuzz":
        print(FuzzBenchmark.run(count: try arguments.int("count", default: 1_000_000)))
    default:
        print(DecodeBenchmark.run(iterations: try arguments.int("iterations", default: 200_000)))
    }
} catch let error as BenchArguments.UsageError {
    fail("\(error.message)\n\(usage)", status: 2)
} catch {
    fail("\(arguments.command): \(error)", status: 1)
}
