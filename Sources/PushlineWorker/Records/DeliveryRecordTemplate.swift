import PushlineAPNSCore

/// Encodes the delivery records of one job. With more than one record to write, the fields every
/// token of the job shares (job id, app, source) are encoded once, when the template is made, and
/// each token then costs only its own fields; with one (a single-token job), the template keeps
/// the fields and writes everything in one pass, one allocation in all.
/// `ResultRecord.encoded()` goes through here too, so there is one encoding of a delivery.
/// A broadcast job's template writes `channel_id` where a token's writes `token`, and each record
/// ends with what it echoes of its job (`JobEcho`), as one of the shared fields.
struct DeliveryRecordTemplate: Sendable {
    /// The fixed parts, one after another in one array (one allocation per job):
    /// `{"type":"delivery","job_id":"…","token":` (or `"channel_id":`) up to `appStart`,
    /// `,"app":"…","status":` up to `tailStart`, and `,"source":{…}}` (with the job's echo before
    /// the `}`) to the end.
    private struct Parts: Sendable {
        var bytes: [UInt8]
        var appStart: Int
        var tailStart: Int
    }

    /// The shared fields, written with each record when there are no `parts`. Stored, not an
    /// enum's payload: a `switch` over one copied the whole payload (a retain and a release of
    /// each string) three times per record.
    private let jobID: String
    private let app: String
    private let source: RecordSource
    private let broadcast: Bool
    private let echo: JobEcho
    /// The shared fields encoded once, for a template of several records; nil for one.
    private let parts: Parts?

    /// - Parameter records: how many records the template will write; one writes them directly.
    /// - Parameter echo: what each record echoes of the job, written last.
    init(
        jobID: String,
        app: String,
        source: RecordSource,
        broadcast: Bool = false,
        echo: JobEcho = .none,
        records: Int = 2
    ) {
        guard records > 1 else {
            (self.jobID, self.app, self.source, self.broadcast, self.echo) = (jobID, app, source, broadcast, echo)
            parts = nil
            return
        }
        // Encoded once: the fields themselves are not kept.
        (self.jobID, self.app, self.source, self.broadcast, self.echo) = ("", "", source, broadcast, .none)
        var appStart = 0
        var tailStart = 0
        let estimate = Self.sharedEstimate(jobID: jobID, app: app, source: source, echo: echo)
        let parts = JSONWriter.encode(estimate: estimate) { json in
            Self.writeHead(jobID: jobID, broadcast: broadcast, into: &json)
            appStart = json.count
            Self.writeMiddle(app: app, into: &json)
            tailStart = json.count
            Self.writeTail(source, echo: echo, into: &json)
        }
        self.parts = Parts(bytes: parts, appStart: appStart, tailStart: tailStart)
    }

    /// Room for the fixed parts: the keys, the source's numbers, and the strings unescaped.
    private static func sharedEstimate(jobID: String, app: String, source: RecordSource, echo: JobEcho) -> Int {
        128 + jobID.utf8.count + app.utf8.count + source.topic.utf8.count + echo.estimate
    }

    /// `{"type":"delivery","job_id":"…","token":` (or `"channel_id":`).
    private static func writeHead(jobID: String, broadcast: Bool, into json: inout JSONWriter) {
        json.raw("{\"type\":\"delivery\",")
        json.key("job_id")
        json.string(jobID)
        json.raw(",")
        json.key(broadcast ? "channel_id" : "token")
    }

    /// `,"app":"…","status":`.
    private static func writeMiddle(app: String, into json: inout JSONWriter) {
        json.raw(",")
        json.key("app")
        json.string(app)
        json.raw(",")
        json.key("status")
    }

    /// `,"source":{…}}`, with the job's echo (`JobEcho`) before the `}`.
    private static func writeTail(_ source: RecordSource, echo: JobEcho, into json: inout JSONWriter) {
        json.raw(",")
        json.key("source")
        ResultRecord.write(source, into: &json)
        echo.write(into: &json)
        json.raw("}")
    }

    /// The record of one token (the delivery's job id, app and source are the template's).
    func encode(_ delivery: ResultRecord.Delivery) -> [UInt8] {
        encode(
            recipient: delivery.recipient,
            status: delivery.status,
            reason: delivery.reason,
            apnsID: delivery.recordAPNSID,
            apnsUniqueID: delivery.apnsUniqueID,
            timestamp: delivery.timestamp,
            attempts: delivery.attempts,
            latencyMilliseconds: delivery.latencyMilliseconds,
            final: delivery.final,
            heldMilliseconds: delivery.heldMilliseconds
        )
    }

    /// The delivery record of `job`'s token `index` (its broadcast's channel) after `outcome`,
    /// written straight from them: what `OutcomeRecords.decide` would put in a
    /// `ResultRecord.Delivery`, without making one (and copying the job's fields into it).
    /// `apnsID`: the one the request was sent with.
    func encode(job: Job, index: Int, apnsID: RecordAPNSID?, outcome: APNSOutcome) -> [UInt8] {
        JSONWriter.encode(estimate: estimate(job: job, index: index, apnsID: apnsID, outcome: outcome)) { json in
            write(job: job, index: index, apnsID: apnsID, outcome: outcome, into: &json)
        }
    }

    /// Room for the delivery record `write(job:index:apnsID:outcome:into:)` writes.
    func estimate(job: Job, index: Int, apnsID: RecordAPNSID?, outcome: APNSOutcome) -> Int {
        estimate(
            recipient: OutcomeRecords.recipient(job: job, index: index),
            reason: outcome.reasonString,
            apnsID: OutcomeRecords.recordAPNSID(outcome, sent: apnsID),
            apnsUniqueID: outcome.response?.apnsUniqueID
        )
    }

    /// - Parameter token: the device token, or the channel id with a broadcast's template.
    func encode(
        token: String,
        status: Int,
        reason: String?,
        apnsID: String?,
        apnsUniqueID: String? = nil,
        timestamp: Int64?,
        attempts: Int,
        latencyMilliseconds: Double,
        final: Bool = true,
        heldMilliseconds: Double? = nil
    ) -> [UInt8] {
        encode(
            recipient: .token(token),
            status: status,
            reason: reason,
            apnsID: apnsID.map { .text($0) },
            apnsUniqueID: apnsUniqueID,
            timestamp: timestamp,
            attempts: attempts,
            latencyMilliseconds: latencyMilliseconds,
            final: final,
            heldMilliseconds: heldMilliseconds
        )
    }

    /// - Parameter recipient: the device token (a job's token bytes are written as they are: the
    ///   decoder checked they are hex), or the channel id with a broadcast's template.
    func encode(
        recipient: ResultRecord.Delivery.Recipient,
        status: Int,
        reason: String?,
        apnsID: RecordAPNSID?,
        apnsUniqueID: String? = nil,
        timestamp: Int64?,
        attempts: Int,
        latencyMilliseconds: Double,
        final: Bool = true,
        heldMilliseconds: Double? = nil
    ) -> [UInt8] {
        let estimate = estimate(recipient: recipient, reason: reason, apnsID: apnsID, apnsUniqueID: apnsUniqueID)
        return JSONWriter.encode(estimate: estimate) { json in
            write(
                recipient: recipient,
                status: status,
                reason: reason,
                apnsID: apnsID,
                apnsUniqueID: apnsUniqueID,
                timestamp: timestamp,
                attempts: attempts,
                latencyMilliseconds: latencyMilliseconds,
                final: final,
                heldMilliseconds: heldMilliseconds,
                into: &json
            )
        }
    }

    /// Room for a record: the fixed parts, the keys, the strings as they are and room for the
    /// numbers. Enough unless a string needs many escapes (then the writer grows and copies once).
    private func estimate(
        recipient: ResultRecord.Delivery.Recipient,
        reason: String?,
        apnsID: RecordAPNSID?,
        apnsUniqueID: String?
    ) -> Int {
        let shared = parts?.bytes.count ?? Self.sharedEstimate(jobID: jobID, app: app, source: source, echo: echo)
        return shared + Self.length(of: recipient) + 2 * 18 + (reason?.utf8.count ?? 0) + (apnsID?.length ?? 0)
            + (apnsUniqueID?.utf8.count ?? 0) + 180
    }

    /// Writes the delivery record of `job`'s token `index` after `outcome` at the end of `json`
    /// (a batch's buffer): `encode(job:index:apnsID:outcome:)` without an array of its own.
    func write(job: Job, index: Int, apnsID: RecordAPNSID?, outcome: APNSOutcome, into json: inout JSONWriter) {
        write(
            recipient: OutcomeRecords.recipient(job: job, index: index),
            status: outcome.status,
            reason: outcome.reasonString,
            apnsID: OutcomeRecords.recordAPNSID(outcome, sent: apnsID),
            apnsUniqueID: outcome.response?.apnsUniqueID,
            timestamp: outcome.response?.timestamp,
            attempts: outcome.attempts,
            latencyMilliseconds: outcome.latencyMilliseconds,
            final: true,
            heldMilliseconds: outcome.heldMilliseconds,
            into: &json
        )
    }

    private func write(
        recipient: ResultRecord.Delivery.Recipient,
        status: Int,
        reason: String?,
        apnsID: RecordAPNSID?,
        apnsUniqueID: String?,
        timestamp: Int64?,
        attempts: Int,
        latencyMilliseconds: Double,
        final: Bool,
        heldMilliseconds: Double?,
        into json: inout JSONWriter
    ) {
        if let parts {
            json.raw(parts.bytes[..<parts.appStart])
            Self.write(recipient, into: &json)
            json.raw(parts.bytes[parts.appStart..<parts.tailStart])
        } else {
            Self.writeHead(jobID: jobID, broadcast: broadcast, into: &json)
            Self.write(recipient, into: &json)
            Self.writeMiddle(app: app, into: &json)
        }
        // Each key with its separators is one literal: one copy rather than four calls.
        json.integer(status)
        json.raw(",\"reason\":")
        json.optionalString(reason)
        json.raw(",\"apns_id\":")
        Self.write(apnsID, into: &json)
        json.raw(",\"apns_unique_id\":")
        json.optionalString(apnsUniqueID)
        json.raw(",\"timestamp\":")
        json.optionalInteger(timestamp)
        json.raw(",\"attempts\":")
        json.integer(attempts)
        json.raw(",\"latency_ms\":")
        json.tenths(latencyMilliseconds)
        json.raw(final ? ",\"final\":true" : ",\"final\":false")
        if let heldMilliseconds {
            json.raw(",\"held_ms\":")
            json.tenths(heldMilliseconds)
        }
        if let parts {
            json.raw(parts.bytes[parts.tailStart...])
        } else {
            Self.writeTail(source, echo: echo, into: &json)
        }
    }

    private static func length(of recipient: ResultRecord.Delivery.Recipient) -> Int {
        switch recipient {
        case .token(let text), .channel(let text): text.utf8.count
        case .deviceToken(let tokens, let index): tokens.range(at: index).count
        }
    }

    private static func write(_ recipient: ResultRecord.Delivery.Recipient, into json: inout JSONWriter) {
        switch recipient {
        case .token(let text), .channel(let text): json.string(text)
        case .deviceToken(let tokens, let index): tokens.withToken(at: index) { json.quotedPlain($0) }
        }
    }

    private static func write(_ apnsID: RecordAPNSID?, into json: inout JSONWriter) {
        switch apnsID {
        case nil: json.raw("null")
        case .text(let text): json.string(text)
        case .block(let block, let index): block.withID(at: index) { json.quotedPlain($0) }
        }
    }
}
