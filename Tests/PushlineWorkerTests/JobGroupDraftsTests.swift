import PushlineAPNS
import PushlineAPNSCore
import PushlineKafka
import Testing

@testable import PushlineWorker

/// Single-token jobs gather into groups per app, of at most `JobGroupDraft.capacity` jobs, in
/// the order they came, and a group's members alike go as one batch (socket-free).
@Suite struct JobGroupDraftsTests {
    let decoder = JobDecoder(bundleIDs: ["default": "com.example.app", "news": "com.example.news"])
    let ids = APNSIDGenerator(seed: 7)

    /// Job `offset` of `app`: its token is the offset in hex, its payload names it.
    func member(_ offset: Int64, app: String, extra: String = "") throws -> JobGroupMember {
        let token = String(repeating: "0", count: 48) + String(format: "%016llx", offset)
        let text = #"{"id":"job-\#(offset)","token":"\#(token)","app":"\#(app)"\#(extra),"payload":{"aps":{"alert":"hi \#(offset)"}}}"#
        let job = try decoder.decode(Array(text.utf8)).get()
        return JobGroupMember(id: RecordID(topic: "jobs", partition: 0, offset: offset, generation: 1), job: job, producedAt: nil)
    }

    final class Observer: APNSBatchObserver {
        func notificationEnded(_ index: Int, outcome: APNSOutcome) {}
        func cancelKey(_ index: Int) -> APNSCancelKey? { nil }
    }

    @Test func aGroupIsFullAtCapacityAndEachAppGathersApart() throws {
        var drafts = JobGroupDrafts()
        var full: [JobGroupDraft] = []
        var offset: Int64 = 0
        // Two apps interleaved: the default app's group fills first.
        for _ in 0..<JobGroupDraft.capacity {
            for app in ["default", "news"] {
                if let draft = drafts.add(try member(offset, app: app), app: app, options: APNSSendOptions()) { full.append(draft) }
                offset += 1
            }
        }
        #expect(full.map(\.app) == ["default", "news"])
        #expect(full.allSatisfy { $0.members.count == JobGroupDraft.capacity && $0.options.count == JobGroupDraft.capacity })
        let first = try #require(full.first)
        #expect(first.members.map(\.id.offset) == (0..<Int64(JobGroupDraft.capacity)).map { $0 * 2 })
        #expect(drafts.takeAll().isEmpty, "nothing left gathering")
    }

    @Test func theRunsEndTakesTheGroupsStillGathering() throws {
        var drafts = JobGroupDrafts()
        for offset in 0..<5 {
            let app = offset == 3 ? "news" : "default"
            #expect(drafts.add(try member(Int64(offset), app: app), app: app, options: APNSSendOptions()) == nil)
        }
        let rest = drafts.takeAll()
        #expect(rest.map(\.app) == ["default", "news"])
        #expect(rest.map { $0.members.map(\.id.offset) } == [[0, 1, 2, 4], [3]])
        #expect(drafts.takeAll().isEmpty)
    }

    /// Members alike go as one batch; a member whose shared headers or options differ starts
    /// another. Whatever the split, request `i` of the group is member `i`'s token, payload, id
    /// `i` and collapse id (members alike but for it each send their own).
    @Test func membersAlikeShareABatchAndEachRequestIsItsMembersOwn() throws {
        let late = APNSSendOptions(deadline: .now.advanced(by: .seconds(60)), group: 1)
        // Alike: 0-2; 3 has an expiration; 4-5 alike again but for 5's collapse id; 6 has other
        // options; 7 its own push type.
        let extras = ["", "", "", #","expiration":1790000000"#, "", #","collapse_id":"c""#, "", #","push_type":"background""#]
        var draft = JobGroupDraft(app: "default")
        for (offset, extra) in extras.enumerated() {
            draft.add(try member(Int64(offset), app: "default", extra: extra), options: offset == 6 ? late : APNSSendOptions())
        }
        let block = ids.reserve(draft.members.count)
        let submissions = draft.submissions(ids: block, observer: Observer())
        #expect(submissions.map(\.firstIndex) == [0, 3, 4, 6, 7])
        #expect(submissions.map(\.batch.count) == [3, 1, 2, 1, 1])
        #expect(submissions.map(\.options) == [APNSSendOptions(), APNSSendOptions(), APNSSendOptions(), late, APNSSendOptions()])
        #expect(submissions[1].batch.expiration == 1_790_000_000 && submissions[4].batch.pushType == .background)
        #expect(submissions[2].batch.collapseIDs == [nil, "c"] && submissions[2].batch.collapseID == nil)
        #expect(submissions.allSatisfy { $0.firstIndex == 4 || $0.batch.collapseIDs == nil }, "one collapse id for all: none each")
        for submission in submissions {
            let batch = submission.batch
            for index in 0..<batch.count {
                let member = draft.members[submission.firstIndex + index]
                #expect(batch.tokens.token(at: index) == member.job.tokens[0])
                #expect((batch.payloads?[index] ?? batch.payload) == member.job.payload)
                #expect(batch.ids.id(at: index) == block.id(at: submission.firstIndex + index))
                #expect((batch.collapseIDs?[index] ?? batch.collapseID) == member.job.requestCollapseID)
            }
            // A run of one sends its job's own payload; a longer run gives each one's.
            #expect((batch.payloads == nil) == (batch.count == 1))
        }
    }

    @Test func aSliceOfABlockHasTheBlocksIDs() {
        let block = ids.reserve(10)
        let slice = block.slice(3..<7)
        #expect(slice.count == 4)
        #expect((0..<4).map { slice.id(at: $0) } == (3..<7).map { block.id(at: $0) })
    }
}
