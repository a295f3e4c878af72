import Foundation
import PushlineTestSupport

/// `pushline run` as a child process, with its log in a file.
final class WorkerProcess: @unchecked Sendable {
    // @unchecked Sendable: Process is thread-safe for signals and waiting; the other properties
    // are constants.
    let process: Process
    let logURL: URL
    /// Resumed by the process's termination handler with its exit status.
    private let exitStatus: Task<Int32, Never>

    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["PUSHLINE_BINARY"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        return ProjectPaths.root.appendingPathComponent(".build/debug/pushline")
    }

    init(configPath: String, logDirectory: URL, environment: [String: String]) throws {
        logURL = logDirectory.appendingPathComponent("worker-\(UUID().uuidString.prefix(6)).log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let log = try FileHandle(forWritingTo: logURL)
        process = Process()
        process.executableURL = Self.binary
        process.arguments = ["run", "--config", configPath]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        let (exits, exited) = AsyncStream.makeStream(of: Int32.self)
        process.terminationHandler = { process in
            exited.yield(process.terminationStatus)
            exited.finish()
        }
        exitStatus = Task { await exits.first { _ in true } ?? -1 }
        try process.run()
    }

    var isRunning: Bool { process.isRunning }

    func terminate() {
        kill(process.processIdentifier, SIGTERM)
    }

    func kill9() {
        kill(process.processIdentifier, SIGKILL)
    }

    /// Waits for the process to exit; its exit status, or nil after `timeout`, when the process
    /// is killed (SIGKILL): a worker that hangs fails its test instead of hanging the suite (the
    /// wait for its exit status cannot be cancelled, so the group would never end).
    func waitForExit(timeout: Duration) async -> Int32? {
        let exitStatus = self.exitStatus
        let pid = process.processIdentifier
        return await withTaskGroup(of: Int32?.self) { group in
            group.addTask { await exitStatus.value }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            if first == nil { kill(pid, SIGKILL) }
            group.cancelAll()
            return first
        }
    }

    var log: String {
        (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
    }
}

/// A minimal HTTP/1.1 GET over a loopback socket, for /metrics, /healthz and /readyz.
enum HTTPGet {
    /// The socket is waited on off the cooperative pool (`offThePool`).
    static func fetch(port: Int, path: String) async throws -> (Int, String) {
        try await offThePool { try fetchBlocking(port: port, path: path) }
    }

    private static func fetchBlocking(port: Int, path: String) throws -> (Int, String) {
        guard let fd = connectLoopback(port: port) else { throw TestSupportError("connect to 127.0.0.1:\(port) failed") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            response.append(contentsOf: buffer[0..<n])
        }
        let text = String(decoding: response, as: UTF8.self)
        let status = Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
        let body = text.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
        return (status, body)
    }
}

/// Runs the `pushline` binary to its end, with `environment` over this process's: exit status,
/// standard output and standard error; waited for off the cooperative pool (`offThePool`).
func runPushline(_ arguments: [String], environment: [String: String] = [:]) async throws -> (status: Int32, stdout: String, stderr: String)
{
    try await offThePool { try runPushlineBlocking(arguments, environment: environment) }
}

private func runPushlineBlocking(
    _ arguments: [String],
    environment: [String: String]
) throws -> (status: Int32, stdout: String, stderr: String) {
    let process = Process()
    process.executableURL = WorkerProcess.binary
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, stdout, stderr)
}
