import Foundation
import NIOCore
import Testing

@testable import PushlineHTTP2

/// nghttp2's own load generator against our server: an independent client implementation.
@Suite struct H2LoadTests {
    static let h2load: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/h2load" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Not skipped without h2load: scripts/setup installs it, so a missing one is a failure.
    @Test func h2loadCompletesAgainstOurServer() async throws {
        let h2load = try #require(Self.h2load, "h2load is not on PATH (Debian package nghttp2-client; scripts/setup installs it)")
        let server = try await TestServer.start(maxConcurrentStreams: 100)
        let output = try await Self.run(h2load, ["-n", "20000", "-c", "4", "-m", "100", "http://127.0.0.1:\(server.port)/"])
        try await server.stop()
        let summary = output.split(separator: "\n").first { $0.hasPrefix("requests:") }.map(String.init) ?? ""
        let codes = output.split(separator: "\n").first { $0.hasPrefix("status codes:") }.map(String.init) ?? ""
        let rate = output.split(separator: "\n").first { $0.hasPrefix("finished in") }.map(String.init) ?? ""
        print("h2load: \(rate) | \(summary) | \(codes)")
        #expect(
            summary.hasPrefix("requests: 20000 total, 20000 started, 20000 done, 20000 succeeded, 0 failed, 0 errored, 0 timeout"),
            "h2load output:\n\(output)"
        )
        #expect(codes.hasPrefix("status codes: 20000 2xx"))
        #expect(server.probe.snapshot.maxOpenStreams <= 100)
        #expect(server.probe.snapshot.limitViolations == 0)
    }

    /// Runs a program to completion and returns its standard output.
    static func run(_ executable: String, _ arguments: [String]) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        return try await withCheckedThrowingContinuation { continuation in
            // Read on a thread of its own: h2load's output must be drained while it runs.
            let reader = Thread {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: String(decoding: data, as: UTF8.self))
            }
            do {
                try process.run()
                reader.start()
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }
}
