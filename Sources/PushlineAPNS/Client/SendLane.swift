/// Which lane a notification travels in. In a pool, an urgent request always takes a free stream
/// before any bulk one (see docs/operations.md, "Transactional and bulk traffic").
public enum SendLane: String, Sendable, Hashable, CaseIterable {
    /// Campaigns: the jobs topic.
    case bulk
    /// Transactional pushes (codes, messages): the urgent jobs topic.
    case urgent
}
