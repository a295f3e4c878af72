/// What every record of a job repeats of it after its own fields: the sender's `campaign`, then
/// its `meta` (always the record's last member), each only when the job has it. One value,
/// decoded once (`JobDecoder.decodeEcho`), carried by the job (`Job.echo`) and by a rejection
/// (`JobRejection.echo`), and written by every record kind through `write(into:)`.
///
/// A new field every record echoes is a stored property here, a line in `write` and `estimate`,
/// and its decoding in `JobDecoder.decodeEcho` (with its slot in `JobFields`); no record type
/// changes (docs/architecture.md, "Common changes").
public struct JobEcho: Sendable, Hashable {
    /// The sender's `campaign` (1...128 bytes), which a cancel may name; nil when none.
    public var campaign: String?
    /// The sender's `meta` object, its bytes exactly as they appeared in the record; nil when none.
    public var meta: [UInt8]?

    public init(campaign: String? = nil, meta: [UInt8]? = nil) {
        self.campaign = campaign
        self.meta = meta
    }

    /// Nothing echoed: a job with neither field.
    public static let none = JobEcho()

    /// Room for the members `write` adds, their strings unescaped.
    var estimate: Int {
        (campaign.map { $0.utf8.count + 14 } ?? 0) + (meta.map { $0.count + 8 } ?? 0)
    }

    /// `,"campaign":"…"` then `,"meta":{…}` (the job's bytes as they are), before the record's
    /// closing `}`; nothing for a field the job has not.
    func write(into json: inout JSONWriter) {
        if let campaign {
            json.raw(",\"campaign\":")
            json.string(campaign)
        }
        guard let meta else { return }
        json.raw(",")
        json.key("meta")
        json.raw(meta[...])
    }
}
