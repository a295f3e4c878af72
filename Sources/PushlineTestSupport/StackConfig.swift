import Foundation

/// Writes a worker configuration file with `scripts/stack config`: scripts/lib/stack.py's
/// `worker_config` is the one writer of the local stack's configuration, for the scripts and the
/// tests alike. `spec` holds that function's arguments (brokers, group_id, metrics_listen,
/// apns_endpoint, ca_file, key_file, key_id, team_id, topics, apps, overrides, ...).
/// The helper is waited for off the cooperative pool (`offThePool`).
public func writeStackConfig(_ spec: [String: Any], to path: String) async throws {
    let json = try JSONSerialization.data(withJSONObject: spec)
    try await offThePool { try runStackConfig(json, to: path) }
}

private func runStackConfig(_ json: Data, to path: String) throws {
    let process = Process()
    process.executableURL = try ProjectPaths.python()
    process.arguments = [ProjectPaths.root.appendingPathComponent("scripts/lib/stack.py").path, "config", "--out", path]
    let input = Pipe()
    let errors = Pipe()
    process.standardInput = input
    process.standardOutput = FileHandle.nullDevice
    process.standardError = errors
    try process.run()
    input.fileHandleForWriting.write(json)
    try input.fileHandleForWriting.close()
    let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw TestSupportError("scripts/stack config exited \(process.terminationStatus): \(message.suffix(800))")
    }
}
