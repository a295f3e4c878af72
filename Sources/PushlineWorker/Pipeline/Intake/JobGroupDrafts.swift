import PushlineAPNS
import PushlineAPNSCore

/// An intake run's drafts of groups, one per app being gathered (`JobGroupDraft`).
struct JobGroupDrafts {
    /// In the order first seen: a run rarely spans more than one or two apps.
    private var drafts: [JobGroupDraft] = []

    /// Adds a single-token job; returns its app's draft when that is now full (and starts a new
    /// one for the app). `expected`: how many jobs of the run may still come, this one included.
    mutating func add(
        _ member: consuming JobGroupMember,
        app: String,
        options: APNSSendOptions,
        expected: Int = JobGroupDraft.capacity
    ) -> JobGroupDraft? {
        let index: Int
        if let found = drafts.firstIndex(where: { $0.app == app }) {
            index = found
        } else {
            drafts.append(JobGroupDraft(app: app, expected: expected))
            index = drafts.count - 1
        }
        drafts[index].add(consume member, options: options)
        guard drafts[index].isFull else { return nil }
        return drafts.remove(at: index)
    }

    /// The drafts still gathering, taken at the end of the run.
    mutating func takeAll() -> [JobGroupDraft] {
        defer { drafts = [] }
        return drafts
    }
}
