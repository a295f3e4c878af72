import Foundation
import PushlineAPNSMock
import PushlineKafka
import PushlineTestSupport
import Testing

/// Apps kept apart (docs/kafka.md, "Apps kept apart"): two apps in one worker, their jobs
/// interleaved on the same partitions, one of them refused by APNs or paced; the other keeps its
/// own speed, and the first one's jobs wait on the deferred topic, nothing lost.
///
/// The two cases run side by side (each has its own broker, mock and worker): most of each is
/// waiting, out a 90 s refusal or on a 25/s pace, and their bounds leave room for a loaded host.
@Suite struct AppIsolationTests {
    static let otherBundleID = "com.example.b"

    /// Two token apps on one mock: `default` and `tenant-b` (its own bundle id; `tenantB` adds
    /// its keys, e.g. a pace), a window of `maxInflight`; `configure` sets the mock's fault.
    static func twoApps(
        maxInflight: Int = 2000,
        tenantB: [String: Any] = [:],
        _ configure: @escaping @Sendable (inout MockConfiguration) -> Void = { _ in }
    ) async throws -> Harness {
        let apps = AppsOverride(
            apps: { mock in
                [
                    "default": AppsOverride.tokenApp(keyFrom: mock),
                    "tenant-b": AppsOverride.tokenApp(keyFrom: mock, ["bundle_id": otherBundleID].merging(tenantB) { _, new in new }),
                ]
            },
            caFile: { mock in mock.caFile }
        )
        return try await Harness.start(maxInflight: maxInflight, apps: apps) { configuration in
            configuration.topics.insert(otherBundleID)
            configuration.latencyMilliseconds = 1
            configure(&configuration)
        }
    }

    /// The mock's fault for `twoApps`: `tenant-b` alone refused (403 InvalidProviderToken) for
    /// `seconds` from its first request; 0: nobody refused.
    static func refusingTenantB(for seconds: Double) -> @Sendable (inout MockConfiguration) -> Void {
        { configuration in
            configuration.outageStatus = 403
            configuration.outageReason = "InvalidProviderToken"
            configuration.outageSeconds = seconds
            if seconds > 0 { configuration.outageTopic = otherBundleID }
        }
    }

    /// Waits until every job offset and every parked copy is committed (the jobs group's and the
    /// deferred group's).
    static func waitUntilBothGroupsCommitted(_ harness: Harness, _ reports: [DeliveryReport]) async throws {
        try await waitUntil("every job offset committed", timeout: .seconds(30)) {
            try await harness.everythingCommitted(reports).0
        }
        try await waitUntil("every parked copy committed", timeout: .seconds(30)) {
            try await deferredCommitted(harness).0
        }
    }

    /// `jobs` jobs of `tokensPerJob` tokens, every second one for `tenant-b`.
    static func interleavedJobs(_ jobs: Int, tokensPerJob: Int) -> (values: [[UInt8]], keys: [String], apps: [String: String]) {
        var values: [[UInt8]] = []
        var keys: [String] = []
        var apps: [String: String] = [:]
        for job in 0..<jobs {
            let app = job % 2 == 0 ? "tenant-b" : "default"
            let tokens = (0..<tokensPerJob).map { deviceToken(job: job, index: $0) }
            for token in tokens { apps[token] = app }
            let list = tokens.map { "\"\($0)\"" }.joined(separator: ",")
            values.append(Array(#"{"id":"\#(app)-\#(job)","app":"\#(app)","tokens":[\#(list)],"payload":{"aps":{"alert":"hi"}}}"#.utf8))
            keys.append("\(app)-\(job)")
        }
        return (values, keys, apps)
    }

    /// The final delivery records by token.
    static func finals(_ records: [ReadRecord]) -> [String: [[String: Any]]] {
        var byToken: [String: [[String: Any]]] = [:]
        for record in WorkerEndToEndTests.deliveries(records) {
            guard let token = record["token"] as? String else { continue }
            byToken[token, default: []].append(record)
        }
        return byToken
    }

    /// Whether the deferred group committed every parked copy: its committed offsets against the
    /// ends of the deferred topic (read whole: the embedded broker's own end offsets are wrong).
    static func deferredCommitted(_ harness: Harness) async throws -> (Bool, String) {
        let parked = try await harness.read(Harness.deferredTopic, timeout: .seconds(30)) { _ in true }
        var ends: [Int32: Int64] = [:]
        for record in parked { ends[record.partition] = max(ends[record.partition] ?? 0, record.offset + 1) }
        let committed = try await harness.committedOffsets(topic: Harness.deferredTopic, partitions: 2, groupSuffix: ".deferred")
        let all = ends.allSatisfy { partition, end in (committed[partition] ?? nil) == end }
        return (all, "deferred ends \(ends), committed \(committed)")
    }

    /// One app refused (403 InvalidProviderToken) for `outage` seconds, the other healthy, 3,000
    /// jobs of 4 tokens interleaved on the same partitions, a window of 2,000. The healthy app's
    /// 6,000 tokens all end while the refused app is still refused (without the shares, the refused
    /// app's notifications fill the window within a second and the partitions pause until the
    /// outage ends); then the refused app heals and its tokens are delivered: every token ends with
    /// exactly one final record, and every offset of both groups is committed.
    ///
    /// The refusal lasts 90 s: the healthy app's work takes 4 s on a quiet host (release build)
    /// and took 40 s in CI's parallel stage (debug build, load average 9), where a 30 s refusal
    /// ended first. Held up behind the refused app, it would end only after the refusal, however
    /// long: the bound is the refusal, and 90 s is more than twice the slowest host seen.
    @Test func aRefusedAppDoesNotSlowAHealthyOne() async throws {
        let outage = Double(ProcessInfo.processInfo.environment["PUSHLINE_TEST_OUTAGE_SECONDS"] ?? "") ?? 90
        // PUSHLINE_TEST_OUTAGE_SECONDS=0: no app refused, the figure to compare with.
        let harness = try await Self.twoApps(Self.refusingTenantB(for: outage))
        let (values, keys, apps) = Self.interleavedJobs(3000, tokensPerJob: 4)
        let reports = try await harness.produce(values, keys: keys)
        let worker = try harness.startWorker()
        let started = Date()

        let healthy = try await harness.read(Harness.resultsTopic, timeout: .seconds(outage + 60)) { records in
            Self.finals(records).keys.filter { apps[$0] == "default" }.count >= 6000
        }
        let healthyDone = Date()
        let outageEnd = harness.mock.stats.outageEndsAt ?? 0
        print(
            "healthy app: 6000 tokens in \(healthyDone.timeIntervalSince(started)) s from the worker's start; the outage ends \(outageEnd - healthyDone.timeIntervalSince1970) s later"
        )
        #expect(outageEnd > 0, "the refused app was refused")
        #expect(healthyDone.timeIntervalSince1970 < outageEnd, "the healthy app finished before the refused app healed")
        #expect(Self.finals(healthy).filter { apps[$0.key] == "default" }.allSatisfy { $0.value.first?["status"] as? Int == 200 })
        let (_, metrics) = try await harness.scrape("/metrics")
        // (The healthy app may park too, as slow at its share, on a host whose cores the test
        // shares: its jobs then come back through the deferred topic, as fast.)
        #expect(metrics.contains(#"pushline_app_parking{app="tenant-b"} 1"#), "the refused app parks")

        let all = try await harness.read(Harness.resultsTopic, timeout: .seconds(outage + 120)) { records in
            Self.finals(records).count >= 12_000
        }
        let finals = Self.finals(all)
        #expect(finals.count == 12_000)
        let duplicates = finals.values.filter { $0.count > 1 }.count
        #expect(duplicates == 0, "\(duplicates) tokens with more than one final record")
        let refused = finals.filter { apps[$0.key] == "tenant-b" }
        #expect(refused.values.allSatisfy { $0.first?["status"] as? Int == 200 }, "the refused app's tokens are delivered after it heals")
        #expect(
            refused.values.allSatisfy { ($0.first?["source"] as? [String: Any])?["topic"] as? String == Harness.jobsTopic },
            "a parked job's results name its first source"
        )
        try await Self.waitUntilBothGroupsCommitted(harness, reports)
        worker.terminate()
        #expect(await worker.waitForExit(timeout: .seconds(40)) == 0)
        await harness.stop()
    }

    /// One app paced at 25 notifications a second with 3,000 tokens (120 s of work), the other
    /// unpaced with as many, interleaved: the unpaced app's tokens all end while the paced app has
    /// most of its own still to send (without the shares it moved at the paced app's rate: both
    /// ended together), and every token ends once.
    ///
    /// A quarter of the paced app's tokens by then means the unpaced app sent at more than four
    /// times the pace, and how fast it can send depends on the host's load: at 200/s the paced app
    /// had sent 82 on a quiet host (release build) but 762 in CI's parallel stage (debug build, load
    /// average 9), over the bound. At 50/s a host with a load average of 14 (this case beside the
    /// refused one, three other suites and busy loops) gave 396; at 25/s such hosts gave 102 and
    /// 232, so the bound leaves room for one three times as slow again, and the worker without
    /// shares (all of them) or 7cdb63e's (about half) still fails it. The rest is waiting.
    @Test func aPacedAppDoesNotSlowAnUnpacedOne() async throws {
        // PUSHLINE_TEST_PACE=0 runs the same without a pace, for the figure to compare with.
        let pace = Int(ProcessInfo.processInfo.environment["PUSHLINE_TEST_PACE"] ?? "") ?? 25
        let harness = try await Self.twoApps(tenantB: ["max_rate": pace])
        let (values, keys, apps) = Self.interleavedJobs(1500, tokensPerJob: 4)
        let reports = try await harness.produce(values, keys: keys)
        let worker = try harness.startWorker()
        let started = Date()

        let unpaced = try await harness.read(Harness.resultsTopic, timeout: .seconds(90)) { records in
            Self.finals(records).keys.filter { apps[$0] == "default" }.count >= 3000
        }
        let pacedDone = Self.finals(unpaced).keys.filter { apps[$0] == "tenant-b" }.count
        let elapsed = Date().timeIntervalSince(started)
        print(
            "pace \(pace): the unpaced app's 3000 tokens ended \(elapsed) s after the worker's start; the other app had \(pacedDone) of its 3000"
        )
        if pace > 0 {
            #expect(pacedDone < 750, "the unpaced app ended before a quarter of the paced app's tokens (7cdb63e: about half)")
        }

        // The paced app's 3,000 tokens take 120 s at its pace.
        let all = try await harness.read(Harness.resultsTopic, timeout: .seconds(240)) { records in
            Self.finals(records).count >= 6000
        }
        let finals = Self.finals(all)
        #expect(finals.count == 6000 && finals.values.allSatisfy { $0.count == 1 && $0.first?["status"] as? Int == 200 })
        try await waitUntil("every job offset committed", timeout: .seconds(30)) {
            try await harness.everythingCommitted(reports).0
        }
        worker.terminate()
        #expect(await worker.waitForExit(timeout: .seconds(40)) == 0)
        await harness.stop()
    }
}

/// Kills and leaves while jobs are parked (AppIsolationTests' third case, a suite of its own so
/// that it runs beside the others).
@Suite(.serialized) struct AppIsolationFaultTests {
    /// The value of `pushline_app_parked_total{app="tenant-b"}` on a worker's metrics page.
    static func parked(_ page: String) -> Int {
        let prefix = #"pushline_app_parked_total{app="tenant-b"} "#
        guard let line = page.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return 0 }
        return Int(Double(line.dropFirst(prefix.count)) ?? 0)
    }

    /// One app refused while its jobs park: the first worker is SIGKILLed mid-parking, a second
    /// takes over, a third joins (a rebalance while jobs are parked and held), and the second
    /// leaves gracefully. When the app heals, every token has its final record, the duplicates are
    /// within what was in flight at the kill, and every offset of both groups is committed.
    @Test func aKillAndALeaveWhileJobsAreParkedLoseNothing() async throws {
        // The refusal (counted from the mock's start) must outlast the first worker's parking, its
        // kill and the second worker's join: on a loaded CI host the first part alone took 33 s.
        let harness = try await AppIsolationTests.twoApps(AppIsolationTests.refusingTenantB(for: 50))
        let (values, keys, apps) = AppIsolationTests.interleavedJobs(3000, tokensPerJob: 4)
        let reports = try await harness.produce(values, keys: keys)
        let first = try harness.startWorker()
        try await waitUntil("the first worker parks the refused app's jobs", timeout: .seconds(60), interval: .milliseconds(50)) {
            Self.parked((try? await harness.scrape("/metrics"))?.1 ?? "") >= 100
        }
        first.kill9()
        _ = await first.waitForExit(timeout: .seconds(10))

        let second = try harness.startWorker()
        try await waitUntil("the second worker parks jobs too", timeout: .seconds(60)) {
            Self.parked((try? await harness.scrape("/metrics"))?.1 ?? "") >= 1
        }
        let port = try ReservedPort()
        let third = try harness.startWorker(environment: ["METRICS_LISTEN": "127.0.0.1:\(port.port)"])
        try await waitUntil("the third worker owns partitions", timeout: .seconds(60)) {
            let page = (try? await HTTPGet.fetch(port: port.port, path: "/metrics"))?.1 ?? ""
            return page.contains("pushline_assigned_partitions") && !page.contains("pushline_assigned_partitions 0")
        }
        second.terminate()
        #expect(await second.waitForExit(timeout: .seconds(40)) == 0, "the second worker leaves gracefully")

        let all = try await harness.read(Harness.resultsTopic, timeout: .seconds(150)) { records in
            AppIsolationTests.finals(records).count >= 12_000
        }
        let finals = AppIsolationTests.finals(all)
        #expect(finals.count == 12_000, "every token has its final record")
        let duplicates = finals.values.reduce(0) { $0 + $1.count - 1 }
        let byApp = Dictionary(grouping: finals.filter { $0.value.count > 1 }.keys) { apps[$0] ?? "?" }.mapValues(\.count)
        let most = finals.values.map(\.count).max() ?? 0
        print("duplicate final records after a kill and a leave while parked: \(duplicates) \(byApp); at most \(most) for one token")
        // Each fault redoes at most once what was not committed at it (docs/kafka.md, "Apps kept
        // apart": the kill, what the held app's jobs in flight kept uncommitted behind them; the
        // leave, what was behind a held job with a token already answered): two faults, so no
        // token has more than three final records.
        #expect(finals.values.allSatisfy { $0.count <= 3 }, "a token with more than three final records")
        try await AppIsolationTests.waitUntilBothGroupsCommitted(harness, reports)
        third.terminate()
        #expect(await third.waitForExit(timeout: .seconds(40)) == 0)
        await harness.stop()
    }
}
