import PushlineAPNSCore
import Testing

@testable import PushlineAPNS
@testable import PushlineHTTP2

/// `SharedHeaderFields`, the connection's cache of a batch's fields around the id, against the
/// rule it caches (`APNSRequestHeaders.forEachRegularHeader` on the batch's prototype) over a long
/// seeded random sequence: batches that repeat, come back after others (A, B, A), share values
/// with older batches or have their own, and connections that start again (a first request).
/// Every answer must be the rule's fields, values and indexing, in order.
@Suite struct SharedHeaderFieldsTests {
    @Test func everyBatchGetsItsOwnFieldsThroughInterleavingsAndReconnects() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(seed: seed)
        let generator = APNSIDGenerator()
        var shared = SharedHeaderFields()
        var batches: [RequestBatch] = []
        var last: RequestBatch?
        var wrong = 0
        var firstWrong: String?
        var comebacks = 0
        for step in 0..<200_000 {
            let batch: RequestBatch
            let roll = random.next() % 10
            if let last, roll < 4 {
                batch = last
            } else if !batches.isEmpty, roll < 8 {
                batch = batches[Int(random.next() % UInt64(batches.count))]
                if batch !== last { comebacks += 1 }
            } else {
                batch = Self.batch(number: step, random: &random, ids: generator)
                if batches.count < 40 { batches.append(batch) } else { batches[Int(random.next() % 40)] = batch }
            }
            last = batch
            let first = random.next() % 500 == 0
            let fields = shared.fields(of: batch, firstOnConnection: first)
            var got: [String] = fields.leading.fields.map(Self.describe)
            got.append("apns-id \(fields.idNeverIndexed ? "never" : "indexed")")
            got += fields.trailing.map { $0.fields.map(Self.describe) } ?? []
            var expected: [String] = []
            APNSRequestHeaders.forEachRegularHeader(of: batch.prototype!, authorization: nil, firstOnConnection: first) {
                name,
                value,
                indexing in
                expected.append(
                    name == "apns-id"
                        ? "apns-id \(indexing == .never ? "never" : "indexed")"
                        : "\(name): \(value) \(indexing == .never ? "never" : "indexed")"
                )
            }
            if got != expected {
                wrong += 1
                if firstWrong == nil { firstWrong = "step \(step): \(got) instead of \(expected)" }
            }
        }
        #expect(comebacks > 10_000)
        #expect(wrong == 0, "seed \(seed): \(wrong) of 200,000 wrong; first: \(firstWrong ?? "-")")
    }

    /// Notifications given one by one (every request's fields now come from the cache): device
    /// notifications and broadcasts whose values repeat, change from one to the next, and come
    /// back, on connections that start again. Every answer must be the rule's fields for that
    /// very notification, its id's header included.
    @Test func everyNotificationGivenAloneGetsItsOwnFields() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(seed: seed)
        var shared = SharedHeaderFields()
        var batches: [RequestBatch] = []
        var wrong = 0
        var firstWrong: String?
        for step in 0..<100_000 {
            let batch: RequestBatch
            if !batches.isEmpty, random.next() % 2 == 0 {
                batch = batches[Int(random.next() % UInt64(batches.count))]
            } else {
                let notifications = (0..<(1 + Int(random.next() % 3))).map { Self.notification(number: step + $0, random: &random) }
                batch = RequestBatch(
                    notifications: notifications,
                    options: APNSSendOptions(),
                    created: .now,
                    completion: .closure { _, _ in }
                )
                if batches.count < 40 { batches.append(batch) } else { batches[Int(random.next() % 40)] = batch }
            }
            let index = Int(random.next() % UInt64(batch.count))
            let notification = batch.notifications[index]
            let first = random.next() % 500 == 0
            let fields = shared.fields(of: notification, in: batch, index: index, firstOnConnection: first)
            var got: [String] = fields.leading.fields.map(Self.describe)
            got.append("\(fields.idName) \(fields.idNeverIndexed ? "never" : "indexed")")
            got += fields.trailing.map { $0.fields.map(Self.describe) } ?? []
            var expected: [String] = []
            APNSRequestHeaders.forEachRegularHeader(of: notification, authorization: nil, firstOnConnection: first) {
                name,
                value,
                indexing in
                expected.append(
                    name == "apns-id" || name == "apns-request-id"
                        ? "\(name) \(indexing == .never ? "never" : "indexed")"
                        : "\(name): \(value) \(indexing == .never ? "never" : "indexed")"
                )
            }
            if got != expected {
                wrong += 1
                if firstWrong == nil { firstWrong = "step \(step): \(got) instead of \(expected)" }
            }
        }
        #expect(wrong == 0, "seed \(seed): \(wrong) of 100,000 wrong; first: \(firstWrong ?? "-")")
    }

    /// A device notification or a broadcast whose values are drawn from small sets.
    static func notification(number: Int, random: inout SplitMix64) -> APNSNotification {
        let expiration: Int64? = [nil, 0, 1_700_000_000, 2_000_000_000 + Int64(number)][Int(random.next() % 4)]
        if random.next() % 4 == 0 {
            return .broadcast(
                channelID: ["ch-a", "ch-b", "ch-\(number)"][Int(random.next() % 3)],
                bundleID: ["com.example.app", "com.example.other"][Int(random.next() % 2)],
                priority: [.immediate, .powerConsiderate, .low][Int(random.next() % 3)],
                expiration: expiration,
                requestID: "r-\(number)",
                payload: []
            )
        }
        let pushType = APNSPushType.allCases[Int(random.next() % UInt64(APNSPushType.allCases.count))]
        let priorities: [APNSPriority] = pushType == .background ? [.powerConsiderate, .low] : [.immediate, .powerConsiderate, .low]
        return APNSNotification(
            deviceToken: "aa\(number)",
            topic: ["com.example.app", "com.example.app.voip", "com.example.other"][Int(random.next() % 3)],
            pushType: pushType,
            priority: priorities[Int(random.next() % UInt64(priorities.count))],
            expiration: expiration,
            collapseID: collapseID(number: number, random: &random),
            apnsID: "id-\(number)",
            payload: []
        )
    }

    /// None, a value shared with other batches, or one of the batch's own as the worker sends a
    /// job without one (`worker.collapse_duplicates`): its id, or its id's hash (`pl-` and 32 hex
    /// digits), or an id of the longest length allowed.
    static func collapseID(number: Int, random: inout SplitMix64) -> String? {
        switch random.next() % 7 {
        case 0, 1: nil
        case 2: "score"
        case 3: "story 1"
        case 4: "c-\(number)"
        case 5: "pl-" + String(String(repeating: String(UInt64(number) &* 0x9E37_79B9, radix: 16), count: 4).suffix(32))
        default: String(repeating: "c", count: 64 - String(number).count) + String(number)
        }
    }

    static func describe(_ field: HTTP2ConstantFields.Field) -> String {
        "\(String(decoding: field.name, as: UTF8.self)): \(String(decoding: field.value, as: UTF8.self)) \(field.neverIndex ? "never" : "indexed")"
    }

    /// A batch of one to three tokens whose values are drawn from small sets (so later batches
    /// share them) or are its own.
    static func batch(number: Int, random: inout SplitMix64, ids: APNSIDGenerator) -> RequestBatch {
        let pushType = APNSPushType.allCases[Int(random.next() % UInt64(APNSPushType.allCases.count))]
        let priorities: [APNSPriority] = pushType == .background ? [.powerConsiderate, .low] : [.immediate, .powerConsiderate, .low]
        let expiration: Int64? = [nil, 0, 1_700_000_000, 2_000_000_000 + Int64(number)][Int(random.next() % 4)]
        let collapseID = collapseID(number: number, random: &random)
        let count = 1 + Int(random.next() % 3)
        let notifications = APNSNotificationBatch(
            tokens: APNSDeviceTokens((0..<count).map { _ in (0..<4).map { _ in String(random.next() | 1 << 63, radix: 16) }.joined() }),
            ids: ids.reserve(count),
            topic: ["com.example.app", "com.example.app.voip", "com.example.other"][Int(random.next() % 3)],
            pushType: pushType,
            priority: priorities[Int(random.next() % UInt64(priorities.count))],
            expiration: expiration,
            collapseID: collapseID,
            payload: Array(#"{"aps":{}}"#.utf8)
        )
        return RequestBatch(batch: notifications, options: APNSSendOptions(), created: .now, completion: .closure { _, _ in })
    }
}
