import Foundation

/// Runs scripts/lib/validate_records.py (the records' JSON Schemas, the job corpus, the AsyncAPI
/// document) with `arguments`, off the cooperative pool: its exit status and its report.
public func validateRecords(_ arguments: [String]) async throws -> (status: Int32, report: String) {
    let python = ProjectPaths.root.appendingPathComponent(".venv/bin/python")
    guard FileManager.default.isExecutableFile(atPath: python.path) else {
        throw TestSupportError("no \(python.path): run scripts/setup (it installs jsonschema and PyYAML there)")
    }
    return try await offThePool { () throws -> (Int32, String) in
        let process = Process()
        process.executableURL = python
        process.arguments = [ProjectPaths.root.appendingPathComponent("scripts/lib/validate_records.py").path] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        // Read to the end before waiting: a report longer than the pipe's buffer would block it.
        let report = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, report)
    }
}

/// Reads `handle` a byte at a time, off the cooperative pool, until what was read satisfies
/// `done` or the writer closes it (a child's first line: "listening on ...").
public func readChildOutput(_ handle: FileHandle, until done: @escaping @Sendable (String) -> Bool) async -> String {
    await offThePool {
        var text = ""
        while !done(text) {
            let byte = handle.readData(ofLength: 1)
            if byte.isEmpty { break }
            text += String(decoding: byte, as: UTF8.self)
        }
        return text
    }
}
