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

    @Test func jobCorpusAgreesWithTheDecoderAndTheSchema() throws {
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
        try Self.validate([
            "--valid", "job.schema.json", files["accepted.jsonl"]!,
            "--invalid", "job.schema.json", files["rejected.jsonl"]!,
            "--valid", "job.schema.json", files["schema-blind.jsonl"]!,
        ])
    }

    /// What `pushline cancel` writes is what cancel.schema.json (and the AsyncAPI document's
    /// control channel) describes; a value with another member, or none of the two targets, is not.
    @Test func controlRecordsMatchTheCancelSchema() throws {
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
        try Self.validate([
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

    @Test func encodedRecordsMatchTheirSchemas() throws {
        let source = RecordSource(topic: "push.jobs", partition: 3, offset: 1234)
        let ids = APNSIDGenerator()
        let token = Self.token

        // Delivery records: through the template the pipeline uses and through `ResultRecord`.
        var deliveries: [[UInt8]] = []
        let template = DeliveryRecordTemplate(jobID: "c42-17", app: "default", source: source)
        deliveries.append(
            template.encode(
                token: token,
                status: 200,
                reason: nil,
                apnsID: ids.next(),
                timestamp: nil,
                attempts: 1,
                latencyMilliseconds: 3.21
            )
        )
        deliveries.append(
            template.encode(
                token: token,
                status: 200,
                reason: nil,
                apnsID: ids.next(),
                apnsUniqueID: "a6b0b0c4-2c4b-4b1e-9c36-3b2d1f1f0e6a",
                timestamp: nil,
                attempts: 1,
                latencyMilliseconds: 3.21
            )
        )
        for (reason, status) in APNSReason.documented {
            let timestamp: Int64? = status == 410 ? 1_790_000_000_000 : nil
            deliveries.append(
                template.encode(
                    token: token,
                    status: status,
                    reason: reason.rawValue,
                    apnsID: ids.next(),
                    timestamp: timestamp,
                    attempts: 2,
                    latencyMilliseconds: 12.44
                )
            )
        }
        deliveries.append(
            template.encode(
                token: token,
                status: 400,
                reason: "SomeFutureReason",
                apnsID: ids.next(),
                timestamp: nil,
                attempts: 1,
                latencyMilliseconds: 1
            )
        )
        for noResponse in [APNSOutcome.NoResponse.timeout, .connection, .expired, .protocolError] {
            let outcome = APNSOutcome(noResponse: noResponse, attempts: 5, latencyMilliseconds: 10_000)
            deliveries.append(
                template.encode(
                    token: token,
                    status: outcome.status,
                    reason: outcome.reasonString,
                    apnsID: ids.next(),
                    timestamp: nil,
                    attempts: outcome.attempts,
                    latencyMilliseconds: outcome.latencyMilliseconds
                )
            )
        }
        // A job past its deadline before it was sent: no apns-id, no attempt.
        let expired = APNSOutcome(noResponse: .expired, attempts: 0, latencyMilliseconds: 0)
        deliveries.append(
            template.encode(
                token: token,
                status: expired.status,
                reason: expired.reasonString,
                apnsID: nil,
                timestamp: nil,
                attempts: 0,
                latencyMilliseconds: 0
            )
        )
        // Held while the app was systemically refused: delivered after, hold limit, deadline.
        deliveries.append(
            template.encode(
                token: token,
                status: 200,
                reason: nil,
                apnsID: ids.next(),
                timestamp: nil,
                attempts: 1,
                latencyMilliseconds: 65_000,
                heldMilliseconds: 60_000.04
            )
        )
        deliveries.append(
            template.encode(
                token: token,
                status: 403,
                reason: "InvalidProviderToken",
                apnsID: ids.next(),
                timestamp: nil,
                attempts: 1,
                latencyMilliseconds: 600_000,
                heldMilliseconds: 599_999.9
            )
        )
        deliveries.append(
            template.encode(
                token: token,
                status: 0,
                reason: "expired",
                apnsID: ids.next(),
                timestamp: nil,
                attempts: 1,
                latencyMilliseconds: 30_000,
                final: true,
                heldMilliseconds: 29_000
            )
        )
        deliveries.append(
            template.encode(
                token: "00",
                status: 200,
                reason: nil,
                apnsID: ids.next(),
                timestamp: nil,
                attempts: 1,
                latencyMilliseconds: 1,
                final: false
            )
        )
        // Broadcasts: channel_id in place of token, apns-request-id as apns_id, apns-unique-id.
        let broadcast = DeliveryRecordTemplate(jobID: "la-9", app: "default", source: source, broadcast: true)
        deliveries.append(
            broadcast.encode(
                token: "dHN0LXNyY2gtY2hubA==",
                status: 200,
                reason: nil,
                apnsID: ids.next(),
                apnsUniqueID: ids.next(),
                timestamp: nil,
                attempts: 1,
                latencyMilliseconds: 4
            )
        )
        deliveries.append(
            ResultRecord.delivery(
                .init(
                    jobID: "la-10",
                    recipient: .channel("AAAA"),
                    app: "news",
                    status: 400,
                    reason: "ChannelNotRegistered",
                    apnsID: ids.next(),
                    timestamp: nil,
                    attempts: 1,
                    latencyMilliseconds: 2,
                    source: source
                )
            ).encoded()
        )
        let escaped = ResultRecord.Delivery(
            jobID: "quote\" slash\\ newline\n é",
            recipient: .token(token.uppercased()),
            app: "news",
            status: 410,
            reason: "Unregistered",
            apnsID: ids.next().uppercased(),
            timestamp: 1_790_000_000_000,
            attempts: 1,
            latencyMilliseconds: 0.05,
            source: RecordSource(topic: "push.jobs.urgent", partition: 0, offset: 0)
        )
        deliveries.append(ResultRecord.delivery(escaped).encoded())

        // Invalidations, as the pipeline makes them (ExpiredToken reported as itself when only
        // it is in worker.invalidate_on).
        let invalidationsWithoutMeta = [
            ResultRecord.tokenInvalidated(
                .init(
                    token: token,
                    app: "default",
                    topic: "com.example.app",
                    reason: "Unregistered",
                    invalidSince: 1_790_000_000_000,
                    jobID: "c42-17",
                    environment: "production"
                )
            ),
            ResultRecord.tokenInvalidated(
                .init(
                    token: "00ff",
                    app: "news",
                    topic: "com.example.news.voip",
                    reason: "ExpiredToken",
                    invalidSince: nil,
                    jobID: "j\"1",
                    environment: "sandbox"
                )
            ),
            ResultRecord.tokenInvalidated(
                .init(
                    token: "00ff",
                    app: "mock",
                    topic: "com.example.app",
                    reason: "Unregistered",
                    invalidSince: 1,
                    jobID: "j2",
                    environment: "custom"
                )
            ),
        ].map { $0.encoded() }

        let goneWithoutMeta = [
            ResultRecord.channelGone(
                .init(channelID: "dHN0LXNyY2gtY2hubA==", app: "default", reason: "ChannelNotRegistered", jobID: "la-9")
            ),
            ResultRecord.channelGone(.init(channelID: "a+b/\"c\\", app: "news \"x\"", reason: "ChannelNotRegistered", jobID: "j\n1")),
        ].map { $0.encoded() }

        // With the sender's meta: the template's shared tail, a one-record template, and each
        // record type.
        let meta = Array(#"{"campaign":"c\/42","user":7,"n":1.50,"nested":{"a":[1,"é"]}}"#.utf8)
        for records in [1, 3] {
            let withMeta = DeliveryRecordTemplate(jobID: "m-1", app: "default", source: source, echo: JobEcho(meta: meta), records: records)
            deliveries.append(
                withMeta.encode(
                    token: token,
                    status: 200,
                    reason: nil,
                    apnsID: ids.next(),
                    timestamp: nil,
                    attempts: 1,
                    latencyMilliseconds: 2
                )
            )
        }
        deliveries.append(
            ResultRecord.delivery(
                .init(
                    jobID: "la-11",
                    recipient: .channel("AAAA"),
                    app: "default",
                    status: 400,
                    reason: "ChannelNotRegistered",
                    apnsID: ids.next(),
                    timestamp: nil,
                    attempts: 1,
                    latencyMilliseconds: 2,
                    heldMilliseconds: 1,
                    source: source,
                    echo: JobEcho(meta: meta)
                )
            ).encoded()
        )
        // With a campaign (with and without meta): cancelled before its send, and delivered.
        for (records, withMeta) in [(1, false), (3, true)] {
            let template = DeliveryRecordTemplate(
                jobID: "cp-1",
                app: "default",
                source: source,
                echo: JobEcho(campaign: "spring \"sale\" é", meta: withMeta ? meta : nil),
                records: records
            )
            for (status, reason) in [(0, "cancelled"), (200, nil)] as [(Int, String?)] {
                deliveries.append(
                    template.encode(
                        token: token,
                        status: status,
                        reason: reason,
                        apnsID: status == 0 ? nil : ids.next(),
                        timestamp: nil,
                        attempts: status == 0 ? 0 : 1,
                        latencyMilliseconds: 0
                    )
                )
            }
        }
        let invalidations =
            invalidationsWithoutMeta + [
                ResultRecord.tokenInvalidated(
                    .init(
                        token: token,
                        app: "default",
                        topic: "com.example.app",
                        reason: "Unregistered",
                        invalidSince: 1,
                        jobID: "cp-1",
                        environment: "custom",
                        echo: JobEcho(campaign: "spring", meta: meta)
                    )
                ).encoded()
            ] + [
                ResultRecord.tokenInvalidated(
                    .init(
                        token: token,
                        app: "default",
                        topic: "com.example.app",
                        reason: "Unregistered",
                        invalidSince: 1,
                        jobID: "m-1",
                        environment: "custom",
                        echo: JobEcho(meta: meta)
                    )
                ).encoded()
            ]
        let gone =
            goneWithoutMeta + [
                ResultRecord.channelGone(
                    .init(channelID: "AAAA", app: "default", reason: "ChannelNotRegistered", jobID: "m-1", echo: JobEcho(meta: meta))
                )
                .encoded(),
                ResultRecord.channelGone(
                    .init(
                        channelID: "AAAA",
                        app: "default",
                        reason: "ChannelNotRegistered",
                        jobID: "cp-1",
                        echo: JobEcho(campaign: "spring")
                    )
                ).encoded(),
            ]

        // Job summaries: tokens and broadcasts, held or not, never sent, with and without meta.
        var done: [[UInt8]] = []
        var tally = JobTally()
        tally.add(status: 200, reason: nil, attempts: 1, latencyMilliseconds: 3.2, heldMilliseconds: nil, answeredAt: 1_790_000_000_100)
        tally.add(
            status: 410,
            reason: "Unregistered",
            attempts: 2,
            latencyMilliseconds: 9,
            heldMilliseconds: 12.5,
            answeredAt: 1_790_000_000_120
        )
        tally.add(
            status: 0,
            reason: "timeout",
            attempts: 5,
            latencyMilliseconds: 10_000,
            heldMilliseconds: nil,
            answeredAt: 1_790_000_010_000
        )
        tally.add(
            status: 400,
            reason: "SomeFutureReason",
            attempts: 1,
            latencyMilliseconds: 1,
            heldMilliseconds: nil,
            answeredAt: 1_790_000_000_001
        )
        let tokensJob = Job(
            id: "c42-17",
            tokens: [token, token, token, token],
            app: "default",
            topic: "com.example.app",
            pushType: .alert,
            priority: .immediate,
            payload: []
        )
        done.append(ResultRecord.jobDone(tally.record(for: tokensJob, source: source)).encoded())
        var withMetaJob = tokensJob
        withMetaJob.meta = meta
        done.append(ResultRecord.jobDone(tally.record(for: withMetaJob, source: source)).encoded())
        var withCampaignJob = withMetaJob
        withCampaignJob.campaign = "spring"
        done.append(ResultRecord.jobDone(tally.record(for: withCampaignJob, source: source)).encoded())
        var neverSent = JobTally()
        neverSent.add(
            status: 0,
            reason: "expired",
            attempts: 0,
            latencyMilliseconds: 0,
            heldMilliseconds: nil,
            answeredAt: 1_790_000_000_000
        )
        var broadcastJob = tokensJob
        broadcastJob.tokens = []
        broadcastJob.channelID = "dHN0LXNyY2gtY2hubA=="
        done.append(ResultRecord.jobDone(neverSent.record(for: broadcastJob, source: source)).encoded())

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
        try Self.validate([
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

    // MARK: AsyncAPI

    @Test func asyncAPIDocumentResolvesToTheSchemas() throws {
        try Self.validate(["--asyncapi", ProjectPaths.root.appendingPathComponent("docs/asyncapi.yaml").path])
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
    static func validate(_ arguments: [String]) throws {
        let python = ProjectPaths.root.appendingPathComponent(".venv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            Issue.record("no \(python.path): run scripts/setup (it installs jsonschema and PyYAML there)")
            return
        }
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
        print(report, terminator: "")
        #expect(process.terminationStatus == 0, "validate_records.py exited \(process.terminationStatus):\n\(report)")
    }
}
