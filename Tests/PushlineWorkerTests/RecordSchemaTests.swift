import Foundation
import PushlineAPNSCore
import PushlineTestSupport
import Testing

@testable import PushlineWorker

/// Keeps the machine-readable contract (docs/schemas/*.schema.json, docs/asyncapi.yaml) true to
/// the code: the job decoder's accept/reject corpus and the encoder's real output go through a
/// real JSON Schema validator (jsonschema, run by scripts/lib/validate_records.py with the
/// project's .venv/bin/python from scripts/setup).
@Suite struct RecordSchemaTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Corpus")
    let decoder = JobDecoder(bundleIDs: ["default": "com.example.app", "news": "com.example.news"])
    static let token = String(repeating: "ab", count: 32)

    /// Rejections a JSON Schema cannot express, by corpus `case`: the decoder's code and why the
    /// schema accepts the record all the same. Each must still be rejected with that code, and
    /// the schema must still accept it (when it learns to refuse one, the entry goes).
    static let schemaBlind: [String: (code: JobRejection.Code, reason: String)] = [
        "duplicate-member": (.duplicateField, "a JSON parser keeps one of two equal member names; the schema sees only that one"),
        "meta-twice": (.duplicateField, "a JSON parser keeps one of two equal member names; the schema sees only that one"),
        "meta-1025-bytes": (.invalidField, "a schema cannot measure a value's size in bytes as written"),
        "unknown-app": (.unknownApp, "the apps are the worker's configuration, not part of the schema"),
        "id-129-bytes-utf8": (.invalidField, "the limit counts UTF-8 bytes; maxLength counts characters"),
        "campaign-129-bytes-utf8": (.invalidField, "the limit counts UTF-8 bytes; maxLength counts characters"),
        "collapse-id-65-bytes-utf8": (.invalidField, "the limit counts UTF-8 bytes; maxLength counts characters"),
        "priority-integral-fraction": (
            .invalidField, "JSON Schema calls 10.0 an integer; the decoder wants integers written without a fraction"
        ),
        "expiration-exponent": (.invalidField, "JSON Schema calls 1e3 an integer; the decoder wants integers written without an exponent"),
        "payload-4097-bytes": (.payloadTooLarge, "a schema cannot measure a value's size in bytes as written"),
        "payload-5121-bytes-voip": (.payloadTooLarge, "a schema cannot measure a value's size in bytes as written"),
        "payload-5121-bytes-broadcast": (.payloadTooLarge, "a schema cannot measure a value's size in bytes as written"),
        "payload-nesting-64": (.invalidJSON, "a schema cannot bound nesting depth"),
        "personalised-unterminated": (.invalidField, "placeholders are text inside the payload's strings, which a schema does not read"),
    ]

    // MARK: Jobs

    @Test func jobCorpusAgreesWithTheDecoderAndTheSchema() async throws {
        let accepted = try Self.lines(Self.corpus.appendingPathComponent("jobs-accepted.jsonl")) + Self.generatedAccepted()
        let rejected = try Self.lines(Self.corpus.appendingPathComponent("jobs-rejected.jsonl")) + Self.generatedRejected()

        for line in accepted {
            if case .failure(let rejection) = decoder.decode(line) {
                Issue.record("accepted corpus: \(Self.describe(line)) rejected: \(rejection)")
            }
        }
        var schemaRejects: [[UInt8]] = []
        var blind: [[UInt8]] = []
        var blindSeen: Set<String> = []
        for line in rejected {
            guard case .failure(let rejection) = decoder.decode(line) else {
                Issue.record("rejected corpus: \(Self.describe(line)) accepted")
                continue
            }
            if let label = Self.label(line), let exception = Self.schemaBlind[label] {
                #expect(rejection.code == exception.code, "\(label): \(rejection), expected \(exception.code.rawValue)")
                blind.append(line)
                blindSeen.insert(label)
            } else {
                schemaRejects.append(line)
            }
        }
        #expect(blindSeen == Set(Self.schemaBlind.keys), "schemaBlind names cases the corpus lacks")

        let directory = try ProjectPaths.temporaryDirectory("pushline-schema")
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try Self.write(directory, ["accepted.jsonl": accepted, "rejected.jsonl": schemaRejects, "schema-blind.jsonl": blind])
        try await Self.validate([
            "--valid", "job.schema.json", files["accepted.jsonl"]!,
            "--invalid", "job.schema.json", files["rejected.jsonl"]!,
            "--valid", "job.schema.json", files["schema-blind.jsonl"]!,
        ])
    }

    /// What `pushline cancel` writes is what cancel.schema.json (and the AsyncAPI document's
    /// control channel) describes; a value with another member, or none of the two targets, is not.
    @Test func controlRecordsMatchTheCancelSchema() async throws {
        let written = [
            ControlRecord(target: .campaign("spring-sale"), cancel: .init(reason: "wrong \"link\"", atMilliseconds: 1_790_000_000_000)),
            ControlRecord(target: .job("c42-17"), cancel: .init(reason: nil, atMilliseconds: 0)),
            ControlRecord(target: .campaign(String(repeating: "é", count: 64)), cancel: .init(reason: "", atMilliseconds: 1)),
        ].compactMap(\.value)
        #expect(written.count == 3)
        let invalid = [
            #"{"type":"cancel","reason":null,"at":1}"#,
            #"{"type":"cancel","campaign":"a","job":"b","reason":null,"at":1}"#,
            #"{"type":"cancel","campaign":"a","reason":null,"at":1,"extra":true}"#,
            #"{"type":"lift","campaign":"a","reason":null,"at":1}"#,
        ].map { Array($0.utf8) }
        let directory = try ProjectPaths.temporaryDirectory("pushline-schema")
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try Self.write(directory, ["cancels.jsonl": written, "not-cancels.jsonl": invalid])
        try await Self.validate([
            "--valid", "cancel.schema.json", files["cancels.jsonl"]!,
            "--invalid", "cancel.schema.json", files["not-cancels.jsonl"]!,
        ])
    }

    /// Long boundary cases, made here rather than stored: token counts and payload sizes.
    static func generatedAccepted() -> [[UInt8]] {
        [
            job("tokens-10000", tokens: 10_000),
            job("payload-4096-bytes", payloadBytes: 4096),
            job("payload-5120-bytes-voip", payloadBytes: 5120, pushType: "voip"),
            job("payload-5120-bytes-broadcast", payloadBytes: 5120, pushType: "liveactivity", channelID: "dHN0LXNyY2gtY2hubA=="),
            job("payload-nesting-63", nesting: 63),
            job("meta-1024-bytes", metaBytes: 1024),
        ]
    }

    static func generatedRejected() -> [[UInt8]] {
        [
            job("tokens-10001", tokens: 10_001),
            job("payload-4097-bytes", payloadBytes: 4097),
            job("payload-5121-bytes-voip", payloadBytes: 5121, pushType: "voip"),
            job("payload-5121-bytes-broadcast", payloadBytes: 5121, pushType: "liveactivity", channelID: "dHN0LXNyY2gtY2hubA=="),
            job("payload-nesting-64", nesting: 64),
            job("meta-1025-bytes", metaBytes: 1025),
        ]
    }

    /// A job whose payload is `payloadBytes` long, or nests `nesting` objects (the record itself
    /// is one more level), with a `meta` of `metaBytes` when given.
    static func job(
        _ label: String,
        tokens: Int = 1,
        payloadBytes: Int? = nil,
        pushType: String = "alert",
        nesting: Int? = nil,
        channelID: String? = nil,
        metaBytes: Int? = nil
    ) -> [UInt8] {
        var payload = "{}"
        if let payloadBytes {
            payload = #"{"a":""# + String(repeating: "x", count: payloadBytes - 8) + #""}"#
            precondition(payload.utf8.count == payloadBytes)
        }
        if let nesting {
            payload = String(repeating: #"{"a":"#, count: nesting) + "1" + String(repeating: "}", count: nesting)
        }
        let list = Array(repeating: "\"00\"", count: tokens).joined(separator: ",")
        let recipients = channelID.map { #""channel_id":"\#($0)""# } ?? #""tokens":[\#(list)]"#
        var meta = ""
        if let metaBytes {
            meta = #","meta":{"m":""# + String(repeating: "x", count: metaBytes - 8) + #""}"#
            precondition(meta.utf8.count == metaBytes + 8)
        }
        return Array(
            #"{"case":"\#(label)","id":"\#(label)",\#(recipients),"push_type":"\#(pushType)"\#(meta),"payload":\#(payload)}"#.utf8
        )
    }

    // MARK: AsyncAPI

    @Test func asyncAPIDocumentResolvesToTheSchemas() async throws {
        try await Self.validate(["--asyncapi", ProjectPaths.root.appendingPathComponent("docs/asyncapi.yaml").path])
    }

    // MARK: Helpers

    /// The records of a JSON Lines file, as bytes (a record need not be UTF-8); empty lines skipped.
    static func lines(_ url: URL) throws -> [[UInt8]] {
        let bytes = [UInt8](try Data(contentsOf: url))
        return bytes.split(separator: UInt8(ascii: "\n")).map(Array.init)
    }

    /// A corpus record's `case` (its first member), if it has one.
    static func label(_ line: [UInt8]) -> String? {
        let prefix = Array(#"{"case":""#.utf8)
        guard line.starts(with: prefix), let end = line[prefix.count...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return String(decoding: line[prefix.count..<end], as: UTF8.self)
    }

    static func describe(_ line: [UInt8]) -> String {
        label(line) ?? String(decoding: line.prefix(60), as: UTF8.self)
    }

    static func write(_ directory: URL, _ files: [String: [[UInt8]]]) throws -> [String: String] {
        var paths: [String: String] = [:]
        for (name, records) in files {
            let url = directory.appendingPathComponent(name)
            try Data(records.map { $0 + [UInt8(ascii: "\n")] }.joined()).write(to: url)
            paths[name] = url.path
        }
        return paths
    }

    /// Runs scripts/lib/validate_records.py; a mismatch fails the test with the script's report.
    static func validate(_ arguments: [String]) async throws {
        let (status, report) = try await validateRecords(arguments)
        print(report, terminator: "")
        #expect(status == 0, "validate_records.py exited \(status):\n\(report)")
    }
}
