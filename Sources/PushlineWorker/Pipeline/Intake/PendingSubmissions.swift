import PushlineAPNS

/// The device-token batches of a run of jobs, per app, until the run is handed to each app's
/// APNs client in one `send(contentsOf:)` (one lock and one settling of its pool for the run).
struct PendingSubmissions {
    /// Per app, in the order first seen: a run rarely spans more than one or two apps.
    private var groups: [(app: String, submissions: [APNSBatchSubmission])] = []

    mutating func add(_ submission: consuming APNSBatchSubmission, app: String) {
        if let index = groups.firstIndex(where: { $0.app == app }) {
            groups[index].submissions.append(submission)
        } else {
            groups.append((app, [submission]))
        }
    }

    /// The submissions per app, handed over: this value is left empty, so each list is the only
    /// reference to its storage (moved on to the client, not copied).
    mutating func takeAll() -> [(app: String, submissions: [APNSBatchSubmission])] {
        defer { groups = [] }
        return groups
    }
}
