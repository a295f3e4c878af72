import PushlineAPNS
import PushlineAPNSCore
import PushlineKafka
import Testing

@testable import PushlineWorker

/// Single-token jobs gather into groups per app, of at most `JobGroupDraft.capacity` jobs, in
/// the order they came (socket-free).
@Suite struct JobGroupDraftsTests {
    let decoder = JobDecoder(bundleIDs: ["default": "com.example.app", "news": "com.example.news"])
    let ids = APNSIDGenerator(seed: 7)

    func member(_ offset: Int64, app: String) throws -> (JobGroupMember, APNSNotificationBatch) {
        let token = String(repeating: "ab", count: 32)
        let text = #"{"id":"job-\#(offset)","token":"\#(token)","app":"\#(app)","payload":{"aps":{"alert":"hi"}}}"#
        let job = try decoder.decode(Array(text.utf8)).get()
        let batch = job.notificationBatch(ids: ids)
        let member = JobGroupMember(
            id: RecordID(topic: "jobs", partition: 0, offset: offset, generation: 1),
            job: job,
            producedAt: nil,
            requestID: batch.ids
        )
        return (member, batch)
    }

    @Test func aGroupIsFullAtCapacityAndEachAppGathersApart() throws {
        var drafts = JobGroupDrafts()
        var full: [JobGroupDraft] = []
        var offset: Int64 = 0
        // Two apps interleaved: the default app's group fills first.
        for _ in 0..<JobGroupDraft.capacity {
            for app in ["default", "news"] {
                let (member, batch) = try member(offset, app: app)
                offset += 1
                if let draft = drafts.add(member, app: app, batch: batch, options: APNSSendOptions()) { full.append(draft) }
            }
        }
        #expect(full.map(\.app) == ["default", "news"])
        #expect(full.allSatisfy { $0.members.count == JobGroupDraft.capacity && $0.requests.count == JobGroupDraft.capacity })
        // In arrival order: member i's request is the batch of member i.
        let first = try #require(full.first)
        #expect(first.members.map(\.id.offset) == (0..<Int64(JobGroupDraft.capacity)).map { $0 * 2 })
        #expect(zip(first.members, first.requests).allSatisfy { $0.requestID == $1.batch.ids })
        #expect(drafts.takeAll().isEmpty, "nothing left gathering")
    }

    @Test func theRunsEndTakesTheGroupsStillGathering() throws {
        var drafts = JobGroupDrafts()
        for offset in 0..<5 {
            let app = offset == 3 ? "news" : "default"
            let (member, batch) = try member(Int64(offset), app: app)
            #expect(drafts.add(member, app: app, batch: batch, options: APNSSendOptions()) == nil)
        }
        let rest = drafts.takeAll()
        #expect(rest.map(\.app) == ["default", "news"])
        #expect(rest.map { $0.members.map(\.id.offset) } == [[0, 1, 2, 4], [3]])
        #expect(drafts.takeAll().isEmpty)
    }
}
