import Foundation

/// The Tansu Kafka-compatible broker (memory storage) on a free loopback port, for one test.
///
/// Each test that needs Kafka starts its own broker and stops it at the end (`stop()`, or
/// `deinit` as a backstop), so tests never share topics or consumer groups.
public final class EmbeddedBroker: @unchecked Sendable {
    // @unchecked Sendable: `process` is set once in init and only read afterwards;
    // Foundation's Process is itself thread-safe for terminate/waitUntilExit.
    public let port: Int
    public var bootstrapServers: String { "127.0.0.1:\(port)" }
    private let process: Process
    private let logURL: URL
    private let tansu: URL

    /// Starts the broker and waits until it accepts connections.
    public init(port: Int? = nil) async throws {
        self.tansu = try ProjectPaths.tansu()
        self.port = try port ?? freeLoopbackPort()
        let dir = try ProjectPaths.temporaryDirectory("tansu")
        self.logURL = dir.appendingPathComponent("broker.log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let log = try FileHandle(forWritingTo: logURL)
        let url = "tcp://127.0.0.1:\(self.port)"
        let process = Process()
        process.executableURL = tansu
        process.arguments = [
            "broker", "--listener-url", url, "--advertised-listener-url", url,
            "--storage-engine", "memory://tansu/",
        ]
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        self.process = process
        let port = self.port
        do {
            try await waitUntil("Tansu accepting on 127.0.0.1:\(port)", timeout: .seconds(20)) {
                guard process.isRunning else {
                    throw TestSupportError("Tansu exited early; log at \(self.logURL.path)")
                }
                return loopbackPortAccepts(port)
            }
        } catch {
            stop()
            throw error
        }
    }

    /// Creates a topic with `partitions` partitions (Tansu's own CLI).
    public func createTopic(_ name: String, partitions: Int) throws {
        let create = Process()
        create.executableURL = tansu
        create.arguments = [
            "topic", "create", name, "--partitions", String(partitions),
            "--broker", "tcp://127.0.0.1:\(port)",
        ]
        create.standardOutput = FileHandle.nullDevice
        create.standardError = FileHandle.nullDevice
        try create.run()
        create.waitUntilExit()
        guard create.terminationStatus == 0 else {
            throw TestSupportError("tansu topic create \(name) exited \(create.terminationStatus)")
        }
    }

    /// Whether the broker process is still running.
    public var isRunning: Bool { process.isRunning }

    /// Stops the broker (SIGTERM, then SIGKILL after two seconds). Idempotent.
    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(2)
        while process.isRunning && Date() < deadline {
            usleep(10_000)
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The broker's log, for failure messages.
    public func logTail(lines: Int = 40) -> String {
        let text = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    deinit {
        stop()
    }
}
