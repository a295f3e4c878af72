import PushlineAPNSCore

/// Turns a job record's bytes into a `Job`, or a `JobRejection` saying exactly what is wrong.
///
/// Runs once per record on the hot path, so it scans the JSON once (no tree, no Foundation) and
/// copies the payload's (and `meta`'s) bytes as they stand in the record: keys keep their order,
/// `\/` stays `\/`, numbers keep their spelling. Unknown fields are ignored so senders can add
/// their own.
public struct JobDecoder: Sendable {
    /// The latest `expiration` accepted: 9999-12-31T23:59:59Z. Later values would overflow
    /// milliseconds and mean nothing to APNs.
    static let latestExpiration: Int64 = 253_402_300_799

    /// App profile name -> bundle id, from the configuration.
    public let bundleIDs: [String: String]
    /// The `default` app's bundle id, for jobs that name no app (no look-up by name for them).
    private let defaultBundleID: String?
    /// Records larger than this are rejected before parsing.
    public var maxRecordBytes: Int
    /// The most tokens one job may carry.
    public var maxTokens: Int
    /// The most bytes a job's `meta` object may take, as written.
    public static let maxMetaBytes = 1024
    /// The most bytes a job's `campaign` may take (UTF-8).
    public static let maxCampaignBytes = 128
    /// Whether a job without a `collapse_id` is sent with one derived from its id
    /// (`worker.collapse_duplicates`, which the worker passes; `Job.requestCollapseID`).
    public var collapseDuplicates: Bool
    /// Whether every job is a dry run, whatever its own `dry_run` says (`worker.dry_run`, which
    /// the worker passes; `Job.dryRun`).
    public var dryRun: Bool

    public init(
        bundleIDs: [String: String],
        maxRecordBytes: Int = 1_000_000,
        maxTokens: Int = 10_000,
        collapseDuplicates: Bool = false,
        dryRun: Bool = false
    ) {
        self.bundleIDs = bundleIDs
        self.defaultBundleID = bundleIDs["default"]
        self.maxRecordBytes = maxRecordBytes
        self.maxTokens = maxTokens
        self.collapseDuplicates = collapseDuplicates
        self.dryRun = dryRun
    }

    public func decode(_ record: [UInt8]) -> Result<Job, JobRejection> {
        decode(record[...])
    }

    /// Decodes a record's value where it lies (a slice of the consumed record's bytes).
    public func decode(_ record: ArraySlice<UInt8>) -> Result<Job, JobRejection> {
        record.withUnsafeBufferPointer { decode(checking: $0) }
    }

    /// Decodes a record's value where it lies (in the consumer's fetch buffer, `JobRecordReader`).
    public func decode(_ record: UnsafeRawBufferPointer) -> Result<Job, JobRejection> {
        decode(checking: record.assumingMemoryBound(to: UInt8.self))
    }

    private func decode(checking record: UnsafeBufferPointer<UInt8>) -> Result<Job, JobRejection> {
        guard record.count <= maxRecordBytes else {
            return .failure(JobRejection(.recordTooLarge, "\(record.count) bytes, limit \(maxRecordBytes)"))
        }
        do {
            return .success(try decode(record))
        } catch let rejection as JobRejection {
            return .failure(rejection)
        } catch {
            return .failure(JobRejection(.invalidJSON, "\(error)"))
        }
    }

    private func decode(_ bytes: UnsafeBufferPointer<UInt8>) throws -> Job {
        var scanned = JobFields()
        do {
            try scanned.scan(bytes)
        } catch let error as JSONScanner.Error {
            // Valid JSON of another type is "not an object"; anything else is "invalid JSON".
            if (try? JSONScanner.validate(bytes)) != nil {
                throw JobRejection(.notAnObject, "the record is JSON but not an object")
            }
            throw JobRejection(.invalidJSON, error.description)
        }
        // Moved into a constant: the functions below capture it, and a captured variable is
        // boxed and copied out for each read.
        let fields = consume scanned

        func string(_ slot: JobFields.Slot) throws -> String? {
            guard let value = fields[slot], value.kind != .null else { return nil }
            guard value.kind == .string else { throw JobRejection(.invalidField, "\(slot.rawValue): not a string") }
            return try JSONScanner.string(bytes, value)
        }
        func integer(_ slot: JobFields.Slot) throws -> Int64? {
            guard let value = fields[slot], value.kind != .null else { return nil }
            guard let number = JSONScanner.integer(bytes, value) else {
                throw JobRejection(.invalidField, "\(slot.rawValue): not an integer")
            }
            return number
        }

        guard let id = try string(.id) else { throw JobRejection(.missingField, "id") }
        guard (1...128).contains(id.utf8.count) else {
            throw JobRejection(.invalidField, "id: length \(id.utf8.count), must be 1..128")
        }
        let echo: JobEcho
        do {
            echo = try Self.decodeEcho(bytes, fields, string: string)
        } catch var rejection as JobRejection {
            rejection.jobID = id
            throw rejection
        }
        do {
            return try decodeRest(id: id, echo: echo, bytes: bytes, fields: fields, string: string, integer: integer)
        } catch var rejection as JobRejection {
            rejection.jobID = id
            rejection.echo = echo
            throw rejection
        }
    }

    /// What every record of the job echoes (`JobEcho`), field by field; a field that does not
    /// decode is rejected with the fields read before it, which its `rejected` record echoes.
    static func decodeEcho(
        _ bytes: UnsafeBufferPointer<UInt8>,
        _ fields: JobFields,
        string: (JobFields.Slot) throws -> String?
    ) throws -> JobEcho {
        var echo = JobEcho()
        do {
            echo.meta = try decodeMeta(bytes, fields)
            echo.campaign = try decodeCampaign(string)
        } catch var rejection as JobRejection {
            rejection.echo = echo
            throw rejection
        }
        return echo
    }

    /// The sender's `meta`: a JSON object of at most `maxMetaBytes` bytes as written, copied byte
    /// for byte like the payload; nil when absent (or null).
    private static func decodeMeta(_ bytes: UnsafeBufferPointer<UInt8>, _ fields: JobFields) throws -> [UInt8]? {
        guard let value = fields[.meta], value.kind != .null else { return nil }
        guard value.kind == .object else { throw JobRejection(.invalidField, "meta: not a JSON object") }
        guard value.range.count <= maxMetaBytes else {
            throw JobRejection(.invalidField, "meta: \(value.range.count) bytes, at most \(maxMetaBytes)")
        }
        return Array(bytes[value.range])
    }

    /// The sender's `campaign`: a string of 1...`maxCampaignBytes` bytes; nil when absent (or null).
    private static func decodeCampaign(_ string: (JobFields.Slot) throws -> String?) throws -> String? {
        guard let campaign = try string(.campaign) else { return nil }
        guard (1...maxCampaignBytes).contains(campaign.utf8.count) else {
            throw JobRejection(.invalidField, "campaign: length \(campaign.utf8.count), must be 1..\(maxCampaignBytes)")
        }
        return campaign
    }

    private func decodeRest(
        id: String,
        echo: JobEcho,
        bytes: UnsafeBufferPointer<UInt8>,
        fields: JobFields,
        string: (JobFields.Slot) throws -> String?,
        integer: (JobFields.Slot) throws -> Int64?
    ) throws -> Job {
        let channelID = try decodeChannelID(bytes, fields)
        // Set when some entry of `tokens` is an object: the job is then personalised.
        var variables: RecordVariables?
        let tokens = channelID == nil ? try decodeTokens(bytes, fields, variables: &variables) : APNSDeviceTokens()

        let named = try string(.app)
        let app = named ?? "default"
        guard let bundleID = named == nil ? defaultBundleID : bundleIDs[app] else {
            throw JobRejection(.unknownApp, "'\(app)' is not in the configuration's apps")
        }

        // A broadcast carries a Live Activity update: that push type by default, and no other.
        var pushType = channelID == nil ? APNSPushType.alert : .liveactivity
        if let raw = try string(.pushType) {
            guard let parsed = APNSPushType(rawValue: raw) else {
                throw JobRejection(.invalidField, "push_type: '\(raw)' is not an APNs push type")
            }
            pushType = parsed
        }
        if channelID != nil, pushType != .liveactivity {
            throw JobRejection(.invalidField, "push_type: '\(pushType.rawValue)' cannot be broadcast; a channel_id job is liveactivity")
        }

        var priority = pushType.defaultPriority
        if let raw = try integer(.priority) {
            guard let parsed = APNSPriority(rawValue: Int(clamping: raw)) else {
                throw JobRejection(.invalidField, "priority: \(raw), must be 10, 5 or 1")
            }
            priority = parsed
        }
        guard pushType.allows(priority) else {
            throw JobRejection(
                .invalidField,
                "priority: \(priority.rawValue) is not allowed with push_type \(pushType.rawValue); APNs requires 5 or 1"
            )
        }

        let expiration = try integer(.expiration)
        if let expiration, !(0...Self.latestExpiration).contains(expiration) {
            throw JobRejection(
                .invalidField,
                "expiration: \(expiration), must be unix seconds 0...\(Self.latestExpiration) (9999-12-31T23:59:59Z)"
            )
        }

        let collapseID = try string(.collapseID)
        if let collapseID {
            guard collapseID.utf8.count <= APNSRequestRules.maxCollapseIDBytes else {
                throw JobRejection(
                    .invalidField,
                    "collapse_id: \(collapseID.utf8.count) bytes, at most \(APNSRequestRules.maxCollapseIDBytes)"
                )
            }
            // An empty `apns-collapse-id` header would not mean "no collapse id", and APNs
            // refuses it: refused here rather than guessed.
            guard !collapseID.isEmpty else {
                throw JobRejection(.invalidField, "collapse_id: empty; leave it out (or null) for none")
            }
            try Self.requireFieldValue(collapseID, .collapseID)
        }

        if channelID != nil {
            // Nothing of a broadcast's request would carry them: refused rather than dropped.
            if fields[.topic].map({ $0.kind != .null }) == true {
                throw JobRejection(.invalidField, "topic: a broadcast has none; its app's bundle id is in the request's path")
            }
            if collapseID != nil {
                throw JobRejection(.invalidField, "collapse_id: a broadcast has none")
            }
        }
        let topic: String
        if let given = try string(.topic) {
            if !given.isEmpty { try Self.requireFieldValue(given, .topic) }
            topic = given
        } else {
            // The configured bundle id was checked at start-up (`ConfigurationValidator`).
            topic = pushType.defaultTopic(bundleID: bundleID)
        }
        guard !topic.isEmpty else { throw JobRejection(.invalidField, "topic: empty") }

        guard let payloadValue = fields[.payload], payloadValue.kind != .null else {
            throw JobRejection(.missingField, "payload")
        }
        guard payloadValue.kind == .object else {
            throw JobRejection(.invalidField, "payload: not a JSON object")
        }
        let payloadBytes = payloadValue.range.count
        let maxPayloadBytes = channelID == nil ? pushType.maxPayloadBytes : APNSBroadcastRules.maxPayloadBytes
        guard payloadBytes <= maxPayloadBytes else {
            throw JobRejection(
                .payloadTooLarge,
                "payload is \(payloadBytes) bytes, limit \(maxPayloadBytes) for \(channelID == nil ? pushType.rawValue : "a broadcast")"
            )
        }
        let payload = Array(bytes[payloadValue.range])

        var deadline: Int64?
        if let raw = try string(.deadline) {
            guard let parsed = RFC3339.milliseconds(raw) else {
                throw JobRejection(.invalidField, "deadline: '\(raw)' is not an RFC 3339 time")
            }
            deadline = parsed
        }

        let dryRun = try Self.decodeDryRun(bytes, fields) || self.dryRun

        var job = Job(
            id: id,
            deviceTokens: tokens,
            app: app,
            topic: topic,
            pushType: pushType,
            priority: priority,
            expiration: expiration,
            collapseID: collapseID,
            payload: payload,
            deadlineMilliseconds: deadline,
            channelID: channelID,
            echo: echo,
            collapseDuplicates: collapseDuplicates
        )
        // Set only on a dry run: a normal job pays this branch and nothing else.
        if dryRun { job.dryRun = true }
        if let variables {
            job.personalisation = try Self.personalisation(bytes, payload: payload, variables: variables, tokens: tokens.count)
        }
        return job
    }

    /// The job's `dry_run`: `true` or `false`; absent or null is false.
    private static func decodeDryRun(_ bytes: UnsafeBufferPointer<UInt8>, _ fields: JobFields) throws -> Bool {
        guard let value = fields[.dryRun], value.kind != .null else { return false }
        guard value.kind == .bool else { throw JobRejection(.invalidField, "dry_run: not a boolean (true or false)") }
        // The scanner checked the literal: `true` or `false`, told apart by its first byte.
        return bytes[value.range.lowerBound] == UInt8(ascii: "t")
    }

    /// Refuses a job field that becomes a request header and would make the request malformed
    /// (RFC 9113 §8.2.1, `HTTPFieldValue`): a server resets or closes the connection for it, so
    /// it must not be sent. The detail is `<field>: <reason>`, e.g. `collapse_id: ends with whitespace`.
    static func requireFieldValue(_ value: String, _ slot: JobFields.Slot) throws {
        if let problem = HTTPFieldValue.problem(value) {
            throw JobRejection(.invalidField, "\(slot.rawValue): \(problem)")
        }
    }
}
