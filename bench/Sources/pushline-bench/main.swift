// pushline-bench: micro-benchmarks for the parts of Pushline (run by scripts/bench).
//
//   pushline-bench transport --connections 4 --streams 100 --seconds 5
//       our HTTP/2 client against our HTTP/2 server over TLS on loopback, closed loop
//   pushline-bench serve --seconds 30
//       only the server (prints "port N"), for h2load to drive
//   pushline-bench decode --iterations 200000
//       job decoding, ns per job, for jobs of 1 and of 100 tokens
//   pushline-bench apns --endpoint 127.0.0.1:PORT --ca-file F --key-file F --key-id K --team-id T --count N
//       the APNs client alone (no Kafka) against a running mock
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())

func option(_ name: String, default value: Int) -> Int {
    guard let index = arguments.firstIndex(of: "--" + name), index + 1 < arguments.count, let parsed = Int(arguments[index + 1]) else {
        return value
    }
    return parsed
}

switch arguments.first {
case "transport":
    let result = try await TransportBenchmark.run(
        connections: option("connections", default: 1), streams: option("streams", default: 100),
        seconds: option("seconds", default: 5))
    print(result)
case "serve":
    try await TransportBenchmark.serve(seconds: option("seconds", default: 30))
case "apns":
    print(try await APNSBenchmark.run(arguments: arguments, count: option("count", default: 200_000), connections: option("connections", default: 4)))
case "fuzz":
    print(FuzzBenchmark.run(count: option("count", default: 1_000_000)))
case "decode":
    print(DecodeBenchmark.run(iterations: option("iterations", default: 200_000)))
default:
    FileHandle.standardError.write(Data("usage: pushline-bench transport|serve|decode [options]\n".utf8))
    exit(2)
}
