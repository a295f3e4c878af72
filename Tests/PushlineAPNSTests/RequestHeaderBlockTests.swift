import PushlineAPNSCore
import Testing

@testable import PushlineAPNS
@testable import PushlineHTTP2

/// A request's whole header block as the connection writes it (`RequestWriter.writeHeaders`, with
/// the fields `SharedHeaderFields` keeps), against Apple's rule applied to the very notification
/// the request is (`APNSRequestHeaders.make`, built here from what the test put in), over a long
/// seeded random sequence: shared batches whose requests share one collapse id or each have their
/// own (a run of single-token jobs, each with its own job's or the one derived from its id:
/// `APNSNotificationBatch.collapseIDs`), notifications given alone, batches that come back after
/// others, and connections that start again. Every field, value, indexing and order must be the
/// rule's: no request may carry another's collapse id.
@Suite struct RequestHeaderBlockTests {
    @Test func everyRequestsBlockIsTheRuleForItsOwnNotification() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(seed: seed)
        let generator = APNSIDGenerator()
        let pseudoHeaders = HTTP2ConstantFields([(":method", "POST", false), (":scheme", "https", false), (":authority", "h", true)])
        var shared = SharedHeaderFields()
        var block = HTTP2HeaderBlock()
        // Each batch with the notifications its requests are, made apart from it.
        var batches: [(batch: RequestBatch, expected: [APNSNotification])] = []
        var last: (batch: RequestBatch, expected: [APNSNotification])?
        var wrong = 0
        var firstWrong: String?
        var ownCollapseIDs = 0
        for step in 0..<100_000 {
            let entry: (batch: RequestBatch, expected: [APNSNotification])
            let roll = random.next() % 10
            if let last, roll < 4 {
                entry = last
            } else if !batches.isEmpty, roll < 7 {
                entry = batches[Int(random.next() % UInt64(batches.count))]
            } else {
                entry = Self.entry(number: step, random: &random, ids: generator)
                if batches.count < 40 { batches.append(entry) } else { batches[Int(random.next() % 40)] = entry }
            }
            last = entry
            let (batch, expected) = entry
            let index = Int(random.next() % UInt64(batch.count))
            if batch.ownCollapseID(at: index) != nil { ownCollapseIDs += 1 }
            let first = random.next() % 500 == 0
            let notification = batch.isShared ? nil : batch.notifications[index]
            let regular = shared.fields(ofRequest: index, in: batch, notification: notification, firstOnConnection: first)
            block.beginRequest()
            RequestWriter.writeHeaders(
                of: batch,
                index: index,
                notification: notification,
                pseudoHeaders: pseudoHeaders,
                authorization: nil,
                regular: regular,
                into: &block
            )
            let stream = Int32(2 * step + 1)
            block.commitRequest(streamID: stream)
            _ = block.request(onStream: stream)
            var got: [String] = []
            block.forEachFieldOfFoundRequest { _, name, value, never, _ in
                got.append(
                    "\(String(decoding: name, as: UTF8.self)): \(String(decoding: value, as: UTF8.self)) \(never ? "never" : "indexed")"
                )
            }
            let rule = APNSRequestHeaders.make(for: expected[index], authority: "h", bearerToken: nil, firstOnConnection: first)
            let want = rule.map { "\($0.name): \($0.value) \($0.indexing == .never ? "never" : "indexed")" }
            if got != want {
                wrong += 1
                if firstWrong == nil { firstWrong = "step \(step), request \(index): \(got) instead of \(want)" }
            }
        }
        #expect(ownCollapseIDs > 10_000, "requests with their own collapse id in a shared batch")
        #expect(wrong == 0, "seed \(seed): \(wrong) of 100,000 wrong; first: \(firstWrong ?? "-")")
    }

    /// A batch and the notifications its requests are: notifications given alone (one in four),
    /// else a shared batch of one to five tokens whose collapse id is none, one for all, or each
    /// one's (from small sets, so values come back, or a job's id: short, or hashed as the worker
    /// derives it).
    static func entry(number: Int, random: inout SplitMix64, ids: APNSIDGenerator) -> (RequestBatch, [APNSNotification]) {
        if random.next() % 4 == 0 {
            let notifications = (0..<(1 + Int(random.next() % 3))).map {
                SharedHeaderFieldsTests.notification(number: number + $0, random: &random)
            }
            let batch = RequestBatch(
                notifications: notifications,
                options: APNSSendOptions(),
                created: .now,
                completion: .closure { _, _ in }
            )
            return (batch, notifications)
        }
        let count = 1 + Int(random.next() % 5)
        func collapseID(_ member: Int) -> String? {
            switch random.next() % 6 {
            case 0: nil
            case 1: ["score", "story 1"][Int(random.next() % 2)]
            case 2: "job-\(number)-\(member)"
            case 3: "pl-" + String(String(repeating: String(UInt64(number * 8 + member) &* 0x9E37_79B9, radix: 16), count: 4).suffix(32))
            case 4: String(repeating: "é", count: 32)
            default: String(repeating: "c", count: 63) + String(member % 10)
            }
        }
        var batch = APNSNotificationBatch(
            tokens: APNSDeviceTokens((0..<count).map { _ in (0..<4).map { _ in String(random.next() | 1 << 63, radix: 16) }.joined() }),
            ids: ids.reserve(count),
            topic: ["com.example.app", "com.example.other"][Int(random.next() % 2)],
            pushType: [.alert, .background][Int(random.next() % 2)],
            priority: .powerConsiderate,
            expiration: [nil, 0, 2_000_000_000 + Int64(number)][Int(random.next() % 3)],
            collapseID: nil,
            payload: Array(#"{"aps":{}}"#.utf8)
        )
        let each = random.next() % 3
        if each == 0 {
            batch.collapseIDs = (0..<count).map(collapseID)
        } else if each == 1 {
            batch.collapseID = collapseID(0)
        }
        let expected = (0..<count).map { index in
            APNSNotification(
                deviceToken: batch.tokens.token(at: index),
                topic: batch.topic,
                pushType: batch.pushType,
                priority: batch.priority,
                expiration: batch.expiration,
                collapseID: batch.collapseIDs?[index] ?? batch.collapseID,
                apnsID: batch.ids.id(at: index),
                payload: batch.payload
            )
        }
        return (RequestBatch(batch: batch, options: APNSSendOptions(), created: .now, completion: .closure { _, _ in }), expected)
    }
}
