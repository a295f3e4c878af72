import Foundation
import PushlineAPNS
import PushlineAPNSCore
import PushlineTestSupport
import Synchronization
import Testing

/// `APNSClient.send(_ batch: APNSNotificationBatch)` against the mock over TLS: every token gets
/// its own request, with its own id on the wire, and exactly one outcome.
@Suite struct NotificationBatchTests {
    @Test func eachTokenOfABatchGoesWithItsOwnIDAndEndsOnce() async throws {
        let directory = try ProjectPaths.temporaryDirectory("batch")
        defer { try? FileManager.default.removeItem(at: directory) }
        let record = directory.appendingPathComponent("requests.jsonl").path
        let count = 300
        let gone: Set<Int> = [3, 7, 250]
        let fixture = try await MockFixture.start { configuration in
            configuration.recordFile = record
            configuration.maxStreams = 40
            configuration.unregisteredTokens = Set(gone.map(APNSClientTests.token))
        }
        let client = try APNSClientTests().tokenClient(fixture, connections: 2)
        client.start()
        let ids = APNSIDGenerator().reserve(count)
        let batch = APNSNotificationBatch(
            tokens: APNSDeviceTokens((0..<count).map(APNSClientTests.token)),
            ids: ids,
            topic: MockFixture.bundleID,
            payload: Array(#"{"aps":{"alert":"hello"}}"#.utf8)
        )
        let outcomes = Mutex<[Int: [APNSOutcome]]>([:])
        let done = Atomic<Int>(0)
        client.send(batch) { index, outcome in
            outcomes.withLock { $0[index, default: []].append(outcome) }
            done.wrappingAdd(1, ordering: .relaxed)
        }
        try await waitUntil("\(count) outcomes", timeout: .seconds(60)) { done.load(ordering: .relaxed) >= count }
        await client.shutdown()
        #expect(fixture.stats.limitViolations == 0)
        try await fixture.stop()

        let ended = outcomes.withLock { $0 }
        #expect(ended.count == count && ended.values.allSatisfy { $0.count == 1 }, "one outcome per token")
        for (index, outcomes) in ended {
            #expect(outcomes[0].status == (gone.contains(index) ? 410 : 200), "token \(index)")
            #expect(outcomes[0].response?.apnsID == nil, "the mock echoes the request's own id")
        }

        // On the wire: each token's request carried the id of its index, a valid UUID (the mock
        // refuses others with BadMessageId).
        let lines = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == count)
        var seen = Set<Int>()
        for line in lines {
            let request = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let token = try #require(request["token"] as? String)
            let index = try #require(Int(token, radix: 16))
            let headers = try #require(request["headers"] as? [String: String])
            #expect(headers["apns-id"] == ids.id(at: index), "token \(index)")
            seen.insert(index)
        }
        #expect(seen.count == count)
    }

    /// A batch whose notifications each have their own payload (a run of single-token jobs
    /// alike): on the wire, each token's request carries its own payload (told apart by length)
    /// and id.
    @Test func eachTokenOfABatchWithPayloadsSendsItsOwn() async throws {
        let count = 64
        let ids = APNSIDGenerator().reserve(count)
        let payloads = (0..<count).map { Array(#"{"aps":{"alert":"\#(String(repeating: "x", count: $0))"}}"#.utf8) }
        var batch = APNSNotificationBatch(
            tokens: APNSDeviceTokens((0..<count).map(APNSClientTests.token)),
            ids: ids,
            topic: MockFixture.bundleID,
            payload: []
        )
        batch.payloads = payloads
        for (index, request, headers) in try await recordedRequests(of: batch, named: "payloads") {
            #expect(request["payload_bytes"] as? Int == payloads[index].count, "token \(index)")
            #expect(headers["apns-id"] == ids.id(at: index), "token \(index)")
        }
    }

    /// A batch whose notifications each have their own collapse id, or none (a run of
    /// single-token jobs, each with its own job's or the one derived from its id), and one
    /// expiration for all: on the wire, each token's request carries its own, or none.
    @Test func eachTokenOfABatchWithCollapseIDsSendsItsOwn() async throws {
        let count = 64
        let collapseIDs: [String?] = (0..<count).map { $0 % 5 == 0 ? nil : $0 % 5 == 1 ? "score" : "job-\($0)" }
        var batch = APNSNotificationBatch(
            tokens: APNSDeviceTokens((0..<count).map(APNSClientTests.token)),
            ids: APNSIDGenerator().reserve(count),
            topic: MockFixture.bundleID,
            expiration: 4_102_444_800,
            payload: Array(#"{"aps":{"alert":"hello"}}"#.utf8)
        )
        batch.collapseIDs = collapseIDs
        for (index, _, headers) in try await recordedRequests(of: batch, named: "collapse-ids") {
            #expect(headers["apns-collapse-id"] == collapseIDs[index], "token \(index)")
            #expect(headers["apns-expiration"] == "4102444800", "token \(index)")
        }
    }

    /// Sends `batch` to a mock that records its requests (10 streams, 2 connections), waits until
    /// every token is accepted, and returns each recorded request with its token's index and its
    /// headers, one per token.
    private func recordedRequests(
        of batch: APNSNotificationBatch,
        named name: String
    ) async throws -> [(index: Int, request: [String: Any], headers: [String: String])] {
        let directory = try ProjectPaths.temporaryDirectory(name)
        defer { try? FileManager.default.removeItem(at: directory) }
        let record = directory.appendingPathComponent("requests.jsonl").path
        let count = batch.count
        let fixture = try await MockFixture.start { configuration in
            configuration.recordFile = record
            configuration.maxStreams = 10
        }
        let client = try APNSClientTests().tokenClient(fixture, connections: 2)
        client.start()
        let done = Atomic<Int>(0)
        client.send(batch) { _, outcome in
            if outcome.status == 200 { done.wrappingAdd(1, ordering: .relaxed) }
        }
        try await waitUntil("\(count) notifications accepted", timeout: .seconds(60)) { done.load(ordering: .relaxed) >= count }
        await client.shutdown()
        try await fixture.stop()

        let lines = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == count)
        return try lines.map { line in
            let request = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let token = try #require(request["token"] as? String)
            let index = try #require(Int(token, radix: 16))
            let headers = try #require(request["headers"] as? [String: String])
            return (index, request, headers)
        }
    }

    /// Many small batches in one hand-over (`send(contentsOf:)`, how the worker sends a run of
    /// single-token jobs): each batch's observer hears exactly its own indices, once each.
    @Test func batchesHandedOverTogetherEachTellTheirOwnObserver() async throws {
        let jobs = 200
        let fixture = try await MockFixture.start { configuration in
            configuration.maxStreams = 30
            configuration.unregisteredTokens = [APNSClientTests.token(7)]
        }
        let client = try APNSClientTests().tokenClient(fixture, connections: 2)
        client.start()
        let generator = APNSIDGenerator()
        let observers = (0..<jobs).map { _ in OutcomeCollector() }
        let submissions = (0..<jobs).map { job in
            APNSBatchSubmission(
                batch: APNSNotificationBatch(
                    // Job 0 has three tokens; the rest one each.
                    tokens: APNSDeviceTokens((job == 0 ? [1000, 1001, 1002] : [job]).map(APNSClientTests.token)),
                    ids: generator.reserve(job == 0 ? 3 : 1),
                    topic: MockFixture.bundleID,
                    payload: Array(#"{"aps":{"alert":"job \#(job)"}}"#.utf8)
                ),
                observer: observers[job]
            )
        }
        client.send(contentsOf: submissions)
        try await waitUntil("every outcome", timeout: .seconds(60)) {
            observers.reduce(0) { $0 + $1.count } >= jobs + 2
        }
        await client.shutdown()
        #expect(fixture.stats.limitViolations == 0)
        try await fixture.stop()

        #expect(observers[0].outcomes.keys.sorted() == [0, 1, 2])
        for (job, observer) in observers.enumerated() {
            let outcomes = observer.outcomes
            #expect(outcomes.values.allSatisfy { $0.count == 1 }, "job \(job): one outcome per token")
            if job > 0 { #expect(outcomes.keys.sorted() == [0], "job \(job)") }
            #expect(outcomes[0]?.first?.status == (job == 7 ? 410 : 200), "job \(job)")
        }
    }
}

extension NotificationBatchTests {
    /// The client's outcome scope wraps every outcome it tells (the worker produces a run's result
    /// records together): each observer call comes inside a run on its own thread, and the runs
    /// gather many outcomes each (the answers of a read batch), not one each.
    @Test func everyOutcomeIsToldInsideARunOfTheScope() async throws {
        let count = 2000
        let fixture = try await MockFixture.start { configuration in
            configuration.maxStreams = 500
            configuration.unregisteredTokens = [APNSClientTests.token(11)]
        }
        let scope = RunRecorder()
        let client = try APNSClientTests().tokenClient(fixture, connections: 2, outcomeScope: scope)
        client.start()
        let batch = APNSNotificationBatch(
            tokens: APNSDeviceTokens((0..<count).map(APNSClientTests.token)),
            ids: APNSIDGenerator().reserve(count),
            topic: MockFixture.bundleID,
            payload: Array(#"{"aps":{"alert":"hello"}}"#.utf8)
        )
        let outside = Atomic<Int>(0)
        let done = Atomic<Int>(0)
        client.send(batch) { _, _ in
            if !scope.isInRun { outside.wrappingAdd(1, ordering: .relaxed) }
            done.wrappingAdd(1, ordering: .relaxed)
        }
        try await waitUntil("\(count) outcomes", timeout: .seconds(60)) { done.load(ordering: .relaxed) >= count }
        await client.shutdown()
        try await fixture.stop()

        #expect(outside.load(ordering: .relaxed) == 0, "every outcome inside a run")
        let runs = scope.runs
        #expect(runs > 0 && runs < count / 4, "\(runs) runs for \(count) outcomes: runs gather outcomes")
    }
}

/// An outcome scope that counts its runs and knows whether the calling thread is in one.
private final class RunRecorder: APNSOutcomeScope {
    private let open = Mutex<Set<UInt>>([])
    private let count = Atomic<Int>(0)

    func withOutcomeRun(_ body: () -> Void) {
        let thread = UInt(pthread_self())
        open.withLock { _ = $0.insert(thread) }
        body()
        open.withLock { _ = $0.remove(thread) }
        count.wrappingAdd(1, ordering: .relaxed)
    }

    var isInRun: Bool {
        let thread = UInt(pthread_self())
        return open.withLock { $0.contains(thread) }
    }

    var runs: Int { count.load(ordering: .relaxed) }
}

/// Collects a batch's outcomes by index.
private final class OutcomeCollector: APNSBatchObserver {
    private let collected = Mutex<[Int: [APNSOutcome]]>([:])

    func notificationEnded(_ index: Int, outcome: APNSOutcome) {
        collected.withLock { $0[index, default: []].append(outcome) }
    }

    func cancelKey(_ index: Int) -> APNSCancelKey? { nil }

    var outcomes: [Int: [APNSOutcome]] { collected.withLock { $0 } }
    var count: Int { collected.withLock { $0.values.reduce(0) { $0 + $1.count } } }
}

extension NotificationBatchTests {
    /// Apple's HPACK rule on the wire, as the server's decoder sees each field, for batches whose
    /// shared fields change between them (the connection keeps them as constant fields): only
    /// `apns-id`, `apns-expiration` and `apns-collapse-id` of the connection's first request are
    /// indexed; every other regular field, and those three afterwards, are literals never
    /// indexed. Each request carries its own batch's values.
    @Test func sharedFieldsKeepApplesIndexingRuleAndEachBatchsValues() async throws {
        let directory = try ProjectPaths.temporaryDirectory("batch-indexing")
        defer { try? FileManager.default.removeItem(at: directory) }
        let record = directory.appendingPathComponent("requests.jsonl").path
        let fixture = try await MockFixture.start { $0.recordFile = record }
        let client = try APNSClientTests().tokenClient(fixture, connections: 1)
        client.start()
        let generator = APNSIDGenerator()
        // (first token, expiration, collapse id, priority) of each batch, sent one after another.
        let batches: [(Int, Int64?, String?, APNSPriority)] = [
            (0, 4_102_444_800, "score", .immediate),
            (10, 4_102_444_801, "score", .immediate),
            (20, nil, "news", .powerConsiderate),
            (30, nil, nil, .immediate),
        ]
        var sent: [Int: (expiration: Int64?, collapseID: String?, priority: APNSPriority, id: String)] = [:]
        for (first, expiration, collapseID, priority) in batches {
            let ids = generator.reserve(4)
            let batch = APNSNotificationBatch(
                tokens: APNSDeviceTokens((first..<first + 4).map(APNSClientTests.token)),
                ids: ids,
                topic: MockFixture.bundleID,
                priority: priority,
                expiration: expiration,
                collapseID: collapseID,
                payload: Array(#"{"aps":{"alert":"hello"}}"#.utf8)
            )
            for index in 0..<4 { sent[first + index] = (expiration, collapseID, priority, ids.id(at: index)) }
            let done = Atomic<Int>(0)
            client.send(batch) { _, _ in done.wrappingAdd(1, ordering: .relaxed) }
            try await waitUntil("batch at \(first)", timeout: .seconds(30)) { done.load(ordering: .relaxed) >= 4 }
        }
        await client.shutdown()
        try await fixture.stop()

        let lines = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 16)
        for line in lines {
            let request = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let token = try #require(request["token"] as? String)
            let index = try #require(Int(token, radix: 16))
            let expected = try #require(sent[index])
            let headers = try #require(request["headers"] as? [String: String])
            let neverIndexed = Set(try #require(request["never_indexed"] as? [String]))
            #expect(headers["apns-id"] == expected.id, "token \(index)")
            #expect(headers["apns-expiration"] == expected.expiration.map { String($0) }, "token \(index)")
            #expect(headers["apns-collapse-id"] == expected.collapseID, "token \(index)")
            #expect(headers["apns-priority"] == expected.priority.headerValue, "token \(index)")
            #expect(headers["apns-topic"] == MockFixture.bundleID)
            for name in ["authorization", "apns-push-type", "apns-topic", "apns-priority"] {
                #expect(neverIndexed.contains(name), "token \(index): \(name) never indexed")
            }
            // Stream 1 is the connection's first request.
            let first = request["stream"] as? Int == 1
            for name in ["apns-id", "apns-expiration", "apns-collapse-id"] where headers[name] != nil {
                #expect(neverIndexed.contains(name) == !first, "token \(index): \(name), first request \(first)")
            }
        }
    }
}
