import Foundation
import Testing

/// docs/architecture.md and the source tree it describes, read from the checkout this test was
/// compiled from: its headings, its Markdown tables, and the Swift files under Sources/.
struct ArchitectureDocument {
    /// Tests/PushlineWorkerTests/ArchitectureDocument.swift -> the repository root, three levels up.
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let path = "docs/architecture.md"

    let lines: [String]

    init() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent(Self.path), encoding: .utf8)
        lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// The text of every heading (`#` to `######`), without its marks.
    var headings: [String] {
        lines.compactMap(Self.heading)
    }

    /// The text of a heading line; nil for any other line.
    static func heading(_ line: String) -> String? {
        guard line.hasPrefix("#") else { return nil }
        return String(line.drop { $0 == "#" }).trimmingCharacters(in: .whitespaces)
    }

    /// The body rows of the first table under the heading `heading` (before the next heading),
    /// each row as its trimmed cells; the header row and the `---` row are left out.
    func table(under heading: String) throws -> [[String]] {
        let found = lines.firstIndex { Self.heading($0) == heading }
        let start = try #require(found, "\(Self.path) has no heading \"\(heading)\"")
        var rows: [[String]] = []
        for line in lines[(start + 1)...] {
            if line.hasPrefix("#") { break }
            if line.hasPrefix("|") {
                rows.append(Self.cells(line))
            } else if !rows.isEmpty {
                break
            }
        }
        try #require(rows.count > 2, "\(Self.path), \"\(heading)\": no table with rows")
        return Array(rows.dropFirst(2))
    }

    /// A table row's cells, split at the `|`s outside code spans.
    static func cells(_ line: String) -> [String] {
        var cells: [String] = []
        var current = ""
        var inCode = false
        for character in line {
            if character == "`" { inCode.toggle() }
            if character == "|", !inCode {
                cells.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
            } else {
                current.append(character)
            }
        }
        cells.append(current.trimmingCharacters(in: .whitespaces))
        // The text before the first `|` and after the last one is not a cell.
        return Array(cells.dropFirst().dropLast())
    }

    /// The backticked spans of `text`, in order, without their backticks.
    static func codeSpans(_ text: String) -> [String] {
        let parts = text.split(separator: "`", omittingEmptySubsequences: false)
        return stride(from: 1, to: parts.count - 1, by: 2).map { String(parts[$0]) }
    }

    /// Every Swift file under Sources/.
    static func sources() throws -> [SwiftSourceFile] {
        let files = try SwiftSourceFile.all(under: "Sources", root: root)
        try #require(!files.isEmpty, "no Swift files under \(root.path)/Sources")
        return files
    }
}
