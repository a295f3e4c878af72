import Foundation

/// Where the project's own tools live, for tests: the repository root and the venv's Python.
public enum ProjectPaths {
    /// The repository root (this file is `Sources/PushlineTestSupport/ProjectPaths.swift`).
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The Python of the project's venv (scripts/setup), which runs scripts/lib/stack.py.
    public static func python() throws -> URL {
        let python = root.appendingPathComponent(".venv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw TestSupportError("no \(python.path): run scripts/setup")
        }
        return python
    }

    /// A fresh temporary directory, removed by the caller (or left for the OS).
    public static func temporaryDirectory(_ prefix: String = "pushline") throws -> URL {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }
}

/// A plain error for test-support failures.
public struct TestSupportError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
