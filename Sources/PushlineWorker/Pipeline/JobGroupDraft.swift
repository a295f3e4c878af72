import PushlineAPNS
import PushlineAPNSCore

/// The single-token jobs of one app in an intake run, gathered until they make a group
/// (`JobGroupProgress`): the members, and each one's request batch and send options.
struct JobGroupDraft {
    /// The most jobs in one group. A group completes its records together, once Kafka has every
    /// member's records, so a slow member (a token retried for seconds) holds back the others'
    /// completion (not their sends or records): small enough that this costs little, large enough
    /// that the group's own objects cost little per job.
    static let capacity = 64

    let app: String
    private(set) var members: [JobGroupMember] = []
    private(set) var requests: [(batch: APNSNotificationBatch, options: APNSSendOptions)] = []

    /// `expected`: how many jobs may still join (the rest of the run), to size the arrays once.
    init(app: String, expected: Int = Self.capacity) {
        self.app = app
        let room = max(1, min(expected, Self.capacity))
        members.reserveCapacity(room)
        requests.reserveCapacity(room)
    }

    var isFull: Bool { members.count >= Self.capacity }

    mutating func add(_ member: consuming JobGroupMember, batch: consuming APNSNotificationBatch, options: APNSSendOptions) {
        members.append(member)
        requests.append((batch, options))
    }
}
