import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The Tansu Kafka-compatible broker (memory storage) on a loopback port, for one test.
///
/// The broker is started by `scripts/stack broker` (scripts/lib/stack.py), the one place that
/// knows how to start it for the demo, the benchmarks, the chaos scenarios and the tests: a port
/// nobody else can take, retries, the readiness check. The helper keeps the broker while its
/// standard input is open, creates topics on request, and stops the broker when the input closes
/// (also when this process dies) or on SIGTERM. Each test starts its own broker and stops it
/// (`stop()`, or `deinit` as a backstop), so tests never share topics or consumer groups.
public final class EmbeddedBroker: @unchecked Sendable {
    // @unchecked Sendable: the constants are set once in init; `commands` serialises the
    // request/answer exchanges on the helper's pipes; Process is thread-safe for signals.
    public let port: Int
    public var bootstrapServers: String { "127.0.0.1:\(port)" }
    /// The consumer-group settings the stack gives every client of this broker (a short session
    /// timeout, so joins take seconds).
    public let clientProperties: [String: String]
    private let helper: Process
    private let requests: FileHandle
    private let answers: FileHandle
    private let commands = Mutex(())

    /// Starts the broker and waits until it answers metadata requests.
    public init() async throws {
        // A write to the pipe of a helper that died must fail with EPIPE, not kill the tests.
        signal(SIGPIPE, SIG_IGN)
        let directory = try ProjectPaths.temporaryDirectory("tansu")
        let helperLog = directory.appendingPathComponent("stack.log")
        _ = FileManager.default.createFile(atPath: helperLog.path, contents: nil)
        let input = Pipe()
        let output = Pipe()
        let process = Process()
        process.executableURL = try ProjectPaths.python()
        process.arguments = [
            ProjectPaths.root.appendingPathComponent("scripts/lib/stack.py").path, "broker",
            "--log", directory.appendingPathComponent("broker.log").path,
        ]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: helperLog)
        try process.run()
        let requests = input.fileHandleForWriting
        let answers = output.fileHandleForReading
        // The first line says where the broker listens; reading it blocks, so not on the pool.
        let first = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: Self.readLine(answers)) }
        }
        guard let first, let object = try? JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any],
            let port = object["port"] as? Int
        else {
            let reason = (try? String(contentsOf: helperLog, encoding: .utf8)) ?? ""
            Self.stop(process, requests: requests)
            throw TestSupportError("scripts/stack broker did not start a broker: \(reason.suffix(800))")
        }
        helper = process
        self.requests = requests
        self.answers = answers
        self.port = port
        self.clientProperties = object["client_properties"] as? [String: String] ?? [:]
    }

    /// Creates a topic with `partitions` partitions (the helper's answer is waited for off the
    /// cooperative pool: `offThePool`).
    public func createTopic(_ name: String, partitions: Int) async throws {
        let answer: String? = await offThePool {
            self.commands.withLock { _ in
                let line = Array("topic \(name) \(partitions)\n".utf8)
                let written = line.withUnsafeBytes { write(self.requests.fileDescriptor, $0.baseAddress, $0.count) }
                return written == line.count ? Self.readLine(self.answers) : nil
            }
        }
        guard answer == "ok" else {
            throw TestSupportError("creating topic \(name): \(answer ?? "the stack helper exited")")
        }
    }

    /// Whether the helper (and so the broker) is still running.
    public var isRunning: Bool { helper.isRunning }

    /// Stops the broker and its helper, without waiting for them: the helper stops the broker
    /// on SIGTERM, and a thread of its own kills it if it is still running 10 s later (the
    /// caller, often a test's `defer` on the cooperative pool, must not wait: `offThePool`).
    /// Idempotent.
    public func stop() {
        Self.stop(helper, requests: requests)
    }

    private static func stop(_ helper: Process, requests: FileHandle) {
        guard helper.isRunning else { return }
        // SIGTERM rather than only closing its input: a child started concurrently elsewhere in
        // this process may hold a copy of the pipe's write end.
        try? requests.close()
        kill(helper.processIdentifier, SIGTERM)
        let pid = helper.processIdentifier
        Thread {
            let deadline = Date().addingTimeInterval(10)
            while helper.isRunning && Date() < deadline {
                usleep(10_000)
            }
            if helper.isRunning { kill(pid, SIGKILL) }
        }.start()
    }

    /// One line from the helper, without its newline; nil at end of file.
    private static func readLine(_ handle: FileHandle) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(handle.fileDescriptor, &byte, 1) == 1 {
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }

    deinit {
        stop()
    }
}
