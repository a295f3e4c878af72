/// What a cancel names: every job of a campaign (the jobs' `campaign`), or one job (its `id`).
///
/// On the control topic it is the record's key (`key`), so the topic's compaction keeps one
/// record per target: the latest cancel, or the tombstone of `pushline cancel --undo`.
public enum CancelTarget: Sendable, Hashable {
    case campaign(String)
    case job(String)

    /// The control record's key: `campaign:<name>` or `job:<id>`.
    public var key: String {
        switch self {
        case .campaign(let name): "campaign:" + name
        case .job(let id): "job:" + id
        }
    }

    /// The target a control record's key names; nil for a key of another form.
    public init?(key: String) {
        if key.hasPrefix("campaign:") {
            self = .campaign(String(key.dropFirst("campaign:".count)))
        } else if key.hasPrefix("job:") {
            self = .job(String(key.dropFirst("job:".count)))
        } else {
            return nil
        }
    }
}
