import PushlineAPNS
import PushlineAPNSCore

/// The single-token jobs of one app in an intake run, gathered until they make a group
/// (`JobGroupProgress`): the members and each one's send options, and, once sealed, the request
/// batches that send them.
///
/// Members alike in everything a request shares (topic, push type, priority, expiration, send
/// options) and next to each other go as one batch (`submissions`): one request batch, one header
/// prototype and one id reservation for the run, where each job would make its own. Only their
/// tokens, ids, payloads and collapse ids differ: each member's collapse id (its own, or the one
/// derived from its id, `Job.requestCollapseID`) goes with its own request only
/// (`APNSNotificationBatch.collapseIDs`).
struct JobGroupDraft {
    /// The most jobs in one group. A group completes its records together, once Kafka has every
    /// member's records, so a slow member (a token retried for seconds) holds back the others'
    /// completion (not their sends or records): small enough that this costs little, large enough
    /// that the group's own objects cost little per job.
    static let capacity = 64

    let app: String
    private(set) var members: [JobGroupMember] = []
    /// Member `i`'s send options (its deadline, lane and assignment generation).
    private(set) var options: [APNSSendOptions] = []

    /// `expected`: how many jobs may still join (the rest of the run), to size the arrays once.
    init(app: String, expected: Int = Self.capacity) {
        self.app = app
        let room = max(1, min(expected, Self.capacity))
        members.reserveCapacity(room)
        options.reserveCapacity(room)
    }

    var isFull: Bool { members.count >= Self.capacity }

    mutating func add(_ member: consuming JobGroupMember, options: APNSSendOptions) {
        members.append(consume member)
        self.options.append(options)
    }

    /// The members' requests as batches for `observer` (member `i` is its index `i`), member `i`
    /// with id `i` of `ids`: one batch per run of members alike (`sendAlike`), in order.
    ///
    /// - Precondition: `ids.count == members.count`.
    func submissions(ids: APNSIDBlock, observer: any APNSBatchObserver) -> [APNSBatchSubmission] {
        precondition(ids.count == members.count, "\(ids.count) ids for \(members.count) members")
        var submissions: [APNSBatchSubmission] = []
        members.withUnsafeBufferPointer { members in
            var start = 0
            // Members are read through the buffer's address: `members[i].job` copied the member
            // (a retain and a release of each of its references) to read one field.
            let first = members.baseAddress!
            while start < members.count {
                var end = start + 1
                while end < members.count && Self.sendAlike((first + start).pointee.job, (first + end).pointee.job)
                    && options[start] == options[end]
                {
                    end += 1
                }
                submissions.append(
                    APNSBatchSubmission(
                        batch: Self.batch(of: members[start..<end], ids: ids.slice(start..<end)),
                        options: options[start],
                        observer: observer,
                        firstIndex: start
                    )
                )
                start = end
            }
        }
        return submissions
    }

    /// Whether two jobs' requests share every header but `:path`, `apns-id` and
    /// `apns-collapse-id` (and the body).
    static func sendAlike(_ a: Job, _ b: Job) -> Bool {
        a.topic == b.topic && a.pushType == b.pushType && a.priority == b.priority && a.expiration == b.expiration
    }

    /// One batch for a run of members alike: a lone member's is its job's own (its token bytes
    /// and payload shared, not copied); a longer run's has their tokens in one buffer, each one's
    /// payload, and their collapse id when they all have the same, else each one's.
    private static func batch(of run: Slice<UnsafeBufferPointer<JobGroupMember>>, ids: APNSIDBlock) -> APNSNotificationBatch {
        let base = run.base.baseAddress!
        let first = (base + run.startIndex).pointee.job
        guard run.count > 1 else { return first.notificationBatch(ids: ids) }
        var tokens = APNSDeviceTokens()
        var payloads: [[UInt8]] = []
        payloads.reserveCapacity(run.count)
        let firstCollapseID = first.requestCollapseID
        // Made at the first member whose collapse id differs: nothing when they all share one.
        var collapseIDs: [String?]?
        // Through the buffer's address, as above: iterating the slice copied each member.
        for index in run.startIndex..<run.endIndex {
            let job = UnsafePointer(base + index).pointer(to: \.job)!
            job.pointee.deviceTokens.bytes.withUnsafeBytes { bytes in
                if tokens.isEmpty { tokens.reserveCapacity(bytes: bytes.count * run.count) }
                tokens.append(bytes: bytes)
            }
            payloads.append(job.pointee.payload)
            let collapseID = job.pointee.requestCollapseID
            if collapseIDs == nil, collapseID != firstCollapseID {
                var each = [String?](repeating: firstCollapseID, count: index - run.startIndex)
                each.reserveCapacity(run.count)
                collapseIDs = each
            }
            collapseIDs?.append(collapseID)
        }
        var batch = APNSNotificationBatch(
            tokens: tokens,
            ids: ids,
            topic: first.topic,
            pushType: first.pushType,
            priority: first.priority,
            expiration: first.expiration,
            collapseID: collapseIDs == nil ? firstCollapseID : nil,
            payload: []
        )
        batch.payloads = payloads
        batch.collapseIDs = collapseIDs
        return batch
    }
}
