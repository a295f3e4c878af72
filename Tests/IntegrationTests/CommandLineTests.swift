import Foundation
import PushlineTestSupport
import Testing

/// The `pushline` binary's exit codes and messages, as operators meet them.
@Suite struct CommandLineTests {
    func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> (Int32, String, String) {
        try await runPushline(arguments, environment: environment)
    }

    @Test func threeMistakesExitTwoWithOneLineEach() async throws {
        let directory = try ProjectPaths.temporaryDirectory("cli")
        let config = directory.appendingPathComponent("bad.yaml").path
        try """
        kafka:
          brokers: ""
        apns:
          connections: 0
        apps:
          default:
            bundle_id: "com.example.app"
            auth: {type: "token", key_file: "/nonexistent/AuthKey.p8", key_id: "K", team_id: "T"}
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let (status, _, stderr) = try await run(["run", "--config", config])
        let lines = stderr.split(separator: "\n")
        #expect(status == 2)
        #expect(lines.count == 3, "\(stderr)")
        #expect(lines.contains { $0.hasPrefix("kafka.brokers:") })
        #expect(lines.contains { $0.hasPrefix("apns.connections:") })
        #expect(lines.contains { $0.hasPrefix("apps.default.auth.key_file:") })
    }

    @Test func aProductionOnlyKeyPointedAtSandboxExitsTwoWithOneLine() async throws {
        let directory = try ProjectPaths.temporaryDirectory("cli")
        let key = directory.appendingPathComponent("AuthKey.p8").path
        try "key".write(toFile: key, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
        let config = directory.appendingPathComponent("scoped.yaml").path
        try """
        apns:
          endpoint: "sandbox"
        apps:
          default:
            bundle_id: "com.example.app"
            auth: {type: "token", key_file: "\(key)", key_id: "K", team_id: "T", environment: "production"}
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let (status, _, stderr) = try await run(["run", "--config", config, "--print-config"])
        let lines = stderr.split(separator: "\n")
        #expect(status == 2)
        #expect(lines.count == 1 && lines[0].hasPrefix("apps.default.auth.environment:"), "\(stderr)")
    }

    @Test func badArgumentsExitTwo() async throws {
        let (status, _, stderr) = try await run(["run", "--no-such-flag"])
        #expect(status == 2)
        #expect(stderr.contains("no-such-flag"))
        let (mockStatus, _, mockError) = try await run(["mock-apns", "--listen", "127.0.0.1:0"])
        #expect(mockStatus == 2)
        #expect(mockError.contains("--tls-cert"))
        // `bench` is no subcommand: scripts/bench runs the benchmarks.
        let (benchStatus, _, benchError) = try await run(["bench"])
        #expect(benchStatus == 2)
        #expect(benchError.contains("bench"))
    }

    /// Every flag `pushline mock-apns --help` lists has a row in docs/mock-apns.md's flag table,
    /// and every row there is a flag the mock takes.
    @Test func everyMockFlagIsDocumentedAndEveryDocumentedFlagExists() async throws {
        let (status, help, _) = try await run(["mock-apns", "--help"])
        #expect(status == 0)
        func flags(_ text: Substring) -> Set<String> {
            Set(text.matches(of: /--[a-z0-9][a-z0-9-]*/).map { String($0.output) })
        }
        let offered = flags(help[...]).subtracting(["--help", "--version"])
        let doc = try String(contentsOf: ProjectPaths.root.appendingPathComponent("docs/mock-apns.md"), encoding: .utf8)
        let start = try #require(doc.range(of: "## Flags"))
        let end = try #require(doc.range(of: "\n## ", options: .regularExpression, range: start.upperBound..<doc.endIndex))
        // The table's rows, by their first cell: `--flag VALUE`.
        let rows = doc[start.upperBound..<end.lowerBound].split(separator: "\n").filter { $0.hasPrefix("| `--") }
        let documented = Set(rows.compactMap { $0.firstMatch(of: /--[a-z0-9][a-z0-9-]*/).map { String($0.output) } })
        #expect(offered.count > 25, "\(offered)")
        #expect(offered.subtracting(documented).isEmpty, "undocumented: \(offered.subtracting(documented).sorted())")
        #expect(documented.subtracting(offered).isEmpty, "documented but not taken: \(documented.subtracting(offered).sorted())")
    }

    /// A SIGUSR1 sent the moment a "listening" line is read writes the stats file; it used to
    /// arrive before the handler was installed and kill the mock. Two lines say so: ours on
    /// stdout, and the log's on stderr, which comes first.
    @Test(arguments: [false, true]) func theMockTakesSIGUSR1AsSoonAsItSaysItListens(logLine: Bool) async throws {
        for _ in 0..<5 {
            let directory = try ProjectPaths.temporaryDirectory("mock-signal")
            let stats = directory.appendingPathComponent("stats.json").path
            let process = Process()
            process.executableURL = WorkerProcess.binary
            process.arguments = [
                "mock-apns", "--listen", "127.0.0.1:0", "--self-signed", directory.path, "--stats-file", stats,
                "--stats-interval", "3600",
            ]
            let out = Pipe()
            if logLine {
                process.standardOutput = FileHandle.nullDevice
                process.standardError = out
            } else {
                process.standardOutput = out
                process.standardError = FileHandle.nullDevice
            }
            try process.run()
            _ = await readChildOutput(out.fileHandleForReading) { $0.contains("listening") }
            kill(process.processIdentifier, SIGUSR1)
            try await waitUntil("the stats file after SIGUSR1", timeout: .seconds(10)) {
                !process.isRunning || FileManager.default.fileExists(atPath: stats)
            }
            #expect(process.isRunning, "SIGUSR1 killed the mock")
            #expect(FileManager.default.fileExists(atPath: stats))
            kill(process.processIdentifier, SIGTERM)
            try await waitUntil("the mock's exit after SIGTERM", timeout: .seconds(30)) { !process.isRunning }
            #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        }
    }

    @Test func printConfigRedactsSecrets() async throws {
        let directory = try ProjectPaths.temporaryDirectory("cli")
        let key = directory.appendingPathComponent("AuthKey.p8").path
        try "key".write(toFile: key, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
        let config = directory.appendingPathComponent("ok.yaml").path
        try """
        kafka:
          properties:
            sasl.password: "hunter2"
        apps:
          default:
            bundle_id: "com.example.app"
            auth: {type: "token", key_file: "\(key)", key_id: "K", team_id: "T"}
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let (status, stdout, _) = try await run(
            ["run", "--config", config, "--print-config"],
            environment: ["KAFKA_BROKERS": "10.1.2.3:9092"]
        )
        #expect(status == 0)
        #expect(stdout.contains(#"brokers: "10.1.2.3:9092""#))
        #expect(stdout.contains("<redacted>"))
        #expect(!stdout.contains("hunter2"))
    }
}
