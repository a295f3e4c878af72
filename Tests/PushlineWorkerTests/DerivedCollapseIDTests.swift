import Foundation
import PushlineAPNS
import PushlineAPNSCore
import PushlineKafka
import Testing

@testable import PushlineWorker

/// The collapse id a job without its own is sent with (`worker.collapse_duplicates`): its id when
/// that is a valid collapse id, else `pl-` and 32 hex digits of the id's SHA-256. The hashed
/// values below were computed apart from the code under test:
/// `python3 -c "import hashlib; print('pl-' + hashlib.sha256(ID.encode()).hexdigest()[:32])"`.
@Suite struct DerivedCollapseIDTests {
    let decoder = JobDecoder(bundleIDs: ["default": "com.example.app"], collapseDuplicates: true)
    let token = String(repeating: "ab", count: 32)

    /// A job `id` (JSON-escaped as written) to one token, with `extra` members.
    func job(id: String, extra: String = "", decoder: JobDecoder? = nil) throws -> Job {
        let text = #"{"id":"\#(id)","token":"\#(token)"\#(extra),"payload":{}}"#
        return try (decoder ?? self.decoder).decode(Array(text.utf8)).get()
    }

    @Test func aShortValidIDIsItsOwnCollapseID() throws {
        let short = try job(id: "c42-17")
        #expect(short.requestCollapseID == "c42-17")
        #expect(short.collapseID == nil, "the job's own collapse_id stays absent")
        // The longest a collapse id may be: 64 bytes, in ASCII or in two-byte characters.
        let longest = String(repeating: "c", count: 64)
        #expect(try job(id: longest).requestCollapseID == longest)
        let accented = String(repeating: "é", count: 32)
        #expect(try job(id: accented).requestCollapseID == accented)
        // Inner whitespace is allowed in a header value, as in a job's own collapse_id.
        #expect(try job(id: "spring sale 7").requestCollapseID == "spring sale 7")
    }

    @Test func aLongerIDIsHashedTo35BytesTheSameInEveryProcess() throws {
        let cases: [(id: String, expected: String)] = [
            (String(repeating: "c", count: 65), "pl-b30855e510446ac34706c5acafeedefd"),
            ("campaign-2026-11-28/" + String(repeating: "x", count: 100), "pl-bfa0ea2090764b8f0525a72363ecb757"),
            (String(repeating: "é", count: 33), "pl-f696c24ae52af2f9f6d5feaed130d4d1"),
        ]
        for (id, expected) in cases {
            let derived = try job(id: id).requestCollapseID
            #expect(derived == expected, "\(id.utf8.count) bytes")
            #expect(derived?.utf8.count == 35 && (derived?.utf8.count ?? 99) <= APNSRequestRules.maxCollapseIDBytes)
            #expect(DerivedCollapseID.of(jobID: id) == expected, "the same on every call")
        }
    }

    @Test func anIDThatIsNoValidHeaderValueIsHashed() throws {
        // Written with JSON escapes: a leading space, a line feed, a tab and a trailing space.
        let cases: [(json: String, expected: String)] = [
            (" j1", "pl-e19df245f7722a081e062159839e4961"),
            (#"j\n1"#, "pl-71f16d9f3c49d4e3c045863ed8c0f606"),
            (#"j\t1 "#, "pl-0c2c1849506e9319e5c83f6451f45500"),
            ("redo 1 ", "pl-9f50f45211fac9095b1f513a8dc07ca4"),
        ]
        for (json, expected) in cases {
            let derived = try #require(try job(id: json).requestCollapseID)
            #expect(derived == expected, "\(json)")
            #expect(HTTPFieldValue.problem(derived) == nil)
        }
    }

    @Test func theJobsOwnCollapseIDWins() throws {
        let own = try job(id: "c42-18", extra: #","collapse_id":"score""#)
        #expect(own.collapseID == "score" && own.requestCollapseID == "score")
        let ownWithLongID = try job(id: String(repeating: "c", count: 100), extra: #","collapse_id":"story 1""#)
        #expect(ownWithLongID.requestCollapseID == "story 1")
    }

    @Test func aBroadcastCarriesNone() throws {
        let text = #"{"id":"la-9","channel_id":"dHN0LXNyY2gtY2hubA==","payload":{}}"#
        let broadcast = try decoder.decode(Array(text.utf8)).get()
        #expect(broadcast.requestCollapseID == nil)
        let sent = try #require(broadcast.broadcastNotifications(bundleID: "com.example.app", ids: APNSIDGenerator(seed: 1)).first)
        #expect(sent.collapseID == nil)
        var headers: [String] = []
        APNSRequestHeaders.forEachRegularHeader(of: sent, authorization: nil, firstOnConnection: false) { name, _, _ in
            headers.append(name)
        }
        #expect(!headers.contains("apns-collapse-id"))
        // A job made a broadcast later loses its derived collapse id too.
        var changed = try job(id: "c42-19")
        changed.channelID = "AAAA"
        #expect(changed.requestCollapseID == nil)
    }

    @Test func turnedOffAJobWithoutCollapseIDHasNone() throws {
        let off = JobDecoder(bundleIDs: ["default": "com.example.app"], collapseDuplicates: false)
        #expect(try job(id: "c42-17", decoder: off).requestCollapseID == nil)
        #expect(try job(id: String(repeating: "c", count: 65), decoder: off).requestCollapseID == nil)
        #expect(try job(id: "c42-18", extra: #","collapse_id":"score""#, decoder: off).requestCollapseID == "score")
        // The decoder's default is off: the worker passes `worker.collapse_duplicates` (default on).
        #expect(PushlineConfiguration().worker.collapseDuplicates)
        #expect(JobDecoder(bundleIDs: [:]).collapseDuplicates == false)
    }

    /// Every request of a job to many tokens carries the job's one derived id.
    @Test func aJobsRequestsCarryItsDerivedCollapseID() throws {
        let text = #"{"id":"many-1","tokens":["\#(token)","cdcd"],"payload":{}}"#
        let job = try decoder.decode(Array(text.utf8)).get()
        let batch = job.notificationBatch(ids: APNSIDGenerator(seed: 2))
        #expect(batch.count == 2 && batch.collapseID == "many-1" && batch.prototype.collapseID == "many-1")
    }

    /// Changing a decoded job's id changes the id derived from it.
    @Test func aNewIDDerivesAgain() throws {
        var job = try job(id: "c42-17")
        job.id = String(repeating: "c", count: 65)
        #expect(job.requestCollapseID == "pl-b30855e510446ac34706c5acafeedefd")
    }

    /// Single-token jobs of one group, alike but for their collapse ids, each its own derived
    /// one or a shared one of their own: they go as one batch, and each request carries its own
    /// member's collapse id, never another's.
    @Test func aGroupsMembersEachSendTheirOwnDerivedCollapseID() throws {
        var draft = JobGroupDraft(app: "default")
        let extras = ["", "", #","collapse_id":"score""#, #","collapse_id":"score""#, "", ""]
        let long = String(repeating: "g", count: 70)
        for (offset, extra) in extras.enumerated() {
            let id = offset == 5 ? long : "g-\(offset)"
            let token = String(repeating: "0", count: 48) + String(format: "%016llx", offset)
            let text = #"{"id":"\#(id)","token":"\#(token)"\#(extra),"payload":{"aps":{"alert":"\#(offset)"}}}"#
            let job = try decoder.decode(Array(text.utf8)).get()
            let recordID = RecordID(topic: "jobs", partition: 0, offset: Int64(offset), generation: 1)
            draft.add(JobGroupMember(id: recordID, job: job, producedAt: nil), options: APNSSendOptions())
        }
        let block = APNSIDGenerator(seed: 3).reserve(draft.members.count)
        let submissions = draft.submissions(ids: block, observer: Observer())
        #expect(submissions.map(\.firstIndex) == [0])
        let batch = try #require(submissions.first?.batch)
        #expect(batch.collapseID == nil && batch.prototype.collapseID == nil)
        #expect(batch.collapseIDs == ["g-0", "g-1", "score", "score", "g-4", DerivedCollapseID.of(jobID: long)])
        for index in 0..<batch.count {
            #expect(batch.tokens.token(at: index) == draft.members[index].job.tokens[0])
        }
        // Turned off, the same members share the prototype's collapse id where they can.
        let off = JobDecoder(bundleIDs: ["default": "com.example.app"])
        var plain = JobGroupDraft(app: "default")
        for offset in 0..<3 {
            let token = String(repeating: "0", count: 48) + String(format: "%016llx", offset)
            let text = #"{"id":"p-\#(offset)","token":"\#(token)","payload":{}}"#
            let recordID = RecordID(topic: "jobs", partition: 0, offset: Int64(offset), generation: 1)
            plain.add(
                JobGroupMember(id: recordID, job: try off.decode(Array(text.utf8)).get(), producedAt: nil),
                options: APNSSendOptions()
            )
        }
        let shared = plain.submissions(ids: APNSIDGenerator(seed: 4).reserve(3), observer: Observer())
        #expect(shared.count == 1 && shared[0].batch.collapseIDs == nil && shared[0].batch.collapseID == nil)
    }

    final class Observer: APNSBatchObserver {
        func notificationEnded(_ index: Int, outcome: APNSOutcome) {}
        func cancelKey(_ index: Int) -> APNSCancelKey? { nil }
    }
}
