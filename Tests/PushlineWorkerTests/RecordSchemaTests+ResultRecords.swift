import Foundation
import PushlineAPNSCore
import PushlineTestSupport
import Testing

@testable import PushlineWorker

/// Result records against their schemas: every record type the worker writes (deliveries,
/// invalidations, gone channels, job summaries, rejections) is what docs/schemas describes.
extension RecordSchemaTests {
    // MARK: Result records

    /// A single-token job's template writes its record in one pass; the bytes are the same as
    /// through the shared parts a many-token job's template keeps.
    @Test(arguments: [false, true]) func aOneRecordTemplateWritesTheSameBytes(broadcast: Bool) {
        let source = RecordSource(topic: "push.jobs", partition: 3, offset: 1234)
        let shared = DeliveryRecordTemplate(jobID: "c42-\"17\"", app: "default", source: source, broadcast: broadcast)
        let single = DeliveryRecordTemplate(jobID: "c42-\"17\"", app: "default", source: source, broadcast: broadcast, records: 1)
        for (status, reason, held) in [(200, nil, nil), (410, "Unregistered", 12.5)] as [(Int, String?, Double?)] {
            func encode(_ template: DeliveryRecordTemplate) -> [UInt8] {
                template.encode(
                    token: Self.token,
                    status: status,
                    reason: reason,
                    apnsID: "5C2E3B4A-0000-4000-8000-000000000001",
                    timestamp: reason == nil ? nil : 1_700_000_000_000,
                    attempts: 2,
                    latencyMilliseconds: 3.21,
                    heldMilliseconds: held
                )
            }
            let bytes = encode(single)
            #expect(bytes == encode(shared), "\(String(decoding: bytes, as: UTF8.self))")
            #expect(String(decoding: bytes, as: UTF8.self).hasPrefix(#"{"type":"delivery","job_id":"c42-\"17\"","#))
        }
    }

    @Test func encodedRecordsMatchTheirSchemas() async throws {
        let source = RecordSource(topic: "push.jobs", partition: 3, offset: 1234)
        let ids = APNSIDGenerator()
        let token = Self.token

        // With the sender's meta: the template's shared tail, a one-record template, and each
        // record type.
        let meta = Array(#"{"campaign":"c\/42","user":7,"n":1.50,"nested":{"a":[1,"é"]}}"#.utf8)
        let deliveries = Self.deliveryRecords(source: source, ids: ids, token: token, meta: meta)
        let invalidations = Self.invalidationRecords(token: token, meta: meta)
        let gone = Self.channelGoneRecords(meta: meta)
        let done = Self.jobDoneRecords(source: source, token: token, meta: meta)

        // Rejections: the decoder's own, for every record of the rejected corpus.
        var rejections: [[UInt8]] = []
        for line in try Self.lines(Self.corpus.appendingPathComponent("jobs-rejected.jsonl")) + Self.generatedRejected() {
            if case .failure(let rejection) = decoder.decode(line) {
                rejections.append(
                    ResultRecord.rejected(
                        .init(
                            jobID: rejection.jobID,
                            error: rejection.description,
                            source: source,
                            echo: rejection.echo
                        )
                    ).encoded()
                )
            }
        }
        let tooLarge = JobDecoder(bundleIDs: ["default": "com.example.app"], maxRecordBytes: 1024).decode(
            Array(repeating: 0x20, count: 1025)
        )
        if case .failure(let rejection) = tooLarge {
            rejections.append(ResultRecord.rejected(.init(jobID: nil, error: rejection.description, source: source)).encoded())
        }
        #expect(rejections.contains { $0.starts(with: Array(#"{"type":"rejected","job_id":null"#.utf8)) })
        #expect(rejections.contains { $0.starts(with: Array(#"{"type":"rejected","job_id":""#.utf8)) })
        let metaEnd = Array(#","meta":{"c":1}}"#.utf8)
        #expect(rejections.contains { $0.suffix(metaEnd.count).elementsEqual(metaEnd) }, "a rejection after the meta was read carries it")
        let campaignEnd = Array(#","campaign":"spring"}"#.utf8)
        #expect(
            rejections.contains { $0.suffix(campaignEnd.count).elementsEqual(campaignEnd) },
            "a rejection after the campaign was read carries it"
        )

        let directory = try ProjectPaths.temporaryDirectory("pushline-schema")
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try Self.write(
            directory,
            [
                "delivery.jsonl": deliveries, "token_invalidated.jsonl": invalidations, "rejected.jsonl": rejections,
                "channel_gone.jsonl": gone, "job_done.jsonl": done,
            ]
        )
        try await Self.validate([
            "--valid", "delivery.schema.json", files["delivery.jsonl"]!,
            "--valid", "token_invalidated.schema.json", files["token_invalidated.jsonl"]!,
            "--valid", "rejected.schema.json", files["rejected.jsonl"]!,
            "--valid", "result.schema.json", files["delivery.jsonl"]!,
            "--valid", "result.schema.json", files["token_invalidated.jsonl"]!,
            "--valid", "result.schema.json", files["rejected.jsonl"]!,
            "--valid", "channel_gone.schema.json", files["channel_gone.jsonl"]!,
            "--valid", "result.schema.json", files["channel_gone.jsonl"]!,
            // A delivery names a token or a channel, and a channel_gone is not a delivery.
            "--invalid", "delivery.schema.json", files["channel_gone.jsonl"]!,
            "--invalid", "channel_gone.schema.json", files["delivery.jsonl"]!,
            "--valid", "job_done.schema.json", files["job_done.jsonl"]!,
            "--valid", "result.schema.json", files["job_done.jsonl"]!,
            "--invalid", "delivery.schema.json", files["job_done.jsonl"]!,
            "--invalid", "job_done.schema.json", files["delivery.jsonl"]!,
        ])
    }
}
