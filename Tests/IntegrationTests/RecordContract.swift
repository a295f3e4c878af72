import Foundation
import PushlineKafka
import PushlineTestSupport
import Testing

/// Checks records read from a real run against the JSON Schemas in docs/schemas, through
/// scripts/lib/validate_records.py (the tool RecordSchemaTests uses on the encoder's output).
enum RecordContract {
    /// Every record's value goes through its type's schema and result.schema.json; each type in
    /// `required` must be among them.
    static func validate(_ records: [ReadRecord], required: Set<String>) async throws {
        var byType: [String: [[UInt8]]] = [:]
        for record in records {
            byType[json(record)["type"] as? String ?? "unknown", default: []].append(record.value)
        }
        #expect(required.isSubset(of: Set(byType.keys)), "types read: \(byType.keys.sorted()), wanted \(required.sorted())")
        let directory = try ProjectPaths.temporaryDirectory("records")
        defer { try? FileManager.default.removeItem(at: directory) }
        var arguments: [String] = []
        for (type, values) in byType {
            let file = directory.appendingPathComponent("\(type).jsonl")
            try Data(values.map { $0 + [UInt8(ascii: "\n")] }.joined()).write(to: file)
            arguments += ["--valid", "\(type).schema.json", file.path, "--valid", "result.schema.json", file.path]
        }
        let (status, report) = try await validateRecords(arguments)
        #expect(status == 0, "\(report.suffix(3000))")
    }
}
