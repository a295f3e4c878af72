import PushlineAPNS
import PushlineAPNSCore
import PushlineAPNSMock
import PushlineTLS
import PushlineTestCA
import PushlineTestSupport
import Synchronization
import Testing

/// The pool against `pushline mock-apns` over TLS on loopback.
@Suite struct APNSClientTests {
    static func token(_ index: Int) -> String {
        String(repeating: "0", count: 64 - String(index, radix: 16).count) + String(index, radix: 16)
    }

    static func notification(_ index: Int, topic: String = MockFixture.bundleID) -> APNSNotification {
        APNSNotification(
            deviceToken: token(index),
            topic: topic,
            apnsID: APNSClientTests.uuid(index),
            payload: Array(#"{"aps":{"alert":"hello"}}"#.utf8)
        )
    }

    static func uuid(_ index: Int) -> String {
        let hex = String(index, radix: 16)
        let tail = String(repeating: "0", count: 12 - hex.count) + hex
        return "00000000-0000-4000-8000-" + tail
    }

    func tokenClient(
        _ fixture: MockFixture,
        connections: Int = 4,
        cap: Int = 1000,
        timeout: Duration = .seconds(10),
        clock: TestClock? = nil,
        retry: RetryPolicy = RetryPolicy(maxAttempts: 5, baseDelay: .milliseconds(5), throttledBaseDelay: .milliseconds(20)),
        outcomeScope: (any APNSOutcomeScope)? = nil
    ) throws -> APNSClient {
        var now: @Sendable () -> Int64 = APNSClientConfiguration.systemNow
        if let clock {
            now = { clock.now }
        }
        return try APNSClient(
            configuration: APNSClientConfiguration(
                endpoint: APNSEndpoint(host: "127.0.0.1", port: fixture.port),
                caFile: fixture.caFile,
                connections: connections,
                connectSpacing: .zero,
                maxStreamsPerConnection: cap,
                requestTimeout: timeout,
                retryPolicy: retry,
                now: now
            ),
            credential: try .token(keyFile: fixture.keyFile, keyID: MockFixture.keyID, teamID: MockFixture.teamID),
            outcomeScope: outcomeScope
        )
    }

    /// Sends `count` notifications at once, waits for every outcome, then shuts the client down:
    /// no outcome can arrive after that, so a duplicate would be in the counts per index.
    func sendAll(_ client: APNSClient, count: Int, offset: Int = 0) async throws -> [Int: [APNSOutcome]] {
        let outcomes = Mutex<[Int: [APNSOutcome]]>([:])
        let done = Atomic<Int>(0)
        client.send((0..<count).map { Self.notification(offset + $0) }) { index, outcome in
            outcomes.withLock { $0[index, default: []].append(outcome) }
            done.wrappingAdd(1, ordering: .relaxed)
        }
        try await waitUntil("\(count) outcomes", timeout: .seconds(120)) { done.load(ordering: .relaxed) >= count }
        await client.shutdown()
        return outcomes.withLock { $0 }
    }

    @Test func neverExceedsTheServersStreamLimitAndUsesEveryConnection() async throws {
        let fixture = try await MockFixture.start { $0.maxStreams = 7 }
        let client = try tokenClient(fixture, connections: 4)
        client.start()
        let outcomes = try await sendAll(client, count: 20_000)
        #expect(outcomes.count == 20_000)
        #expect(outcomes.values.allSatisfy { $0.count == 1 && $0[0].status == 200 })
        let stats = fixture.stats
        #expect(stats.maxOpenStreams <= 7, "the mock saw \(stats.maxOpenStreams) streams open on one connection")
        #expect(stats.maxOpenStreams == 7, "the pool should fill the limit it is given")
        #expect(stats.limitViolations == 0)
        #expect(stats.maxOpenStreamsWhileProbing <= 1, "one stream until the first success")
        #expect(stats.requestsByConnection.count == 4, "all four connections carried traffic: \(stats.requestsByConnection)")
        #expect(stats.requestsByConnection.values.allSatisfy { $0 > 1000 })
        try await fixture.stop()
    }

    @Test func limitDropsAndGoawaysLoseNothingAndDuplicateNothing() async throws {
        let fixture = try await MockFixture.start { configuration in
            configuration.maxStreams = 100
            configuration.goawayEvery = 1000
            configuration.limitDropEvery = 1500
            configuration.limitDropMilliseconds = 20
            configuration.latencyMilliseconds = 1
        }
        let client = try tokenClient(fixture, connections: 3)
        client.start()
        let outcomes = try await sendAll(client, count: 10_000)
        #expect(outcomes.count == 10_000)
        let duplicated = outcomes.values.filter { $0.count != 1 }.count
        #expect(duplicated == 0)
        let failed = outcomes.values.flatMap { $0 }.filter { $0.status != 200 }
        #expect(failed.isEmpty, "\(failed.prefix(3))")
        let stats = fixture.stats
        #expect(stats.goawaysSent >= 5)
        #expect(stats.limitViolations == 0)
        try await fixture.stop()
    }

    @Test func providerTokenRefreshesAtFiftyMinutesAndRetriesExpiredOnce() async throws {
        let clientClock = TestClock()
        let mockClock = TestClock(clientClock.now)
        let fixture = try await MockFixture.start { configuration in
            configuration.now = { mockClock.now }
        }
        let client = try tokenClient(fixture, connections: 1, clock: clientClock)
        client.start()
        let first = await client.send(Self.notification(1))
        #expect(first.status == 200)

        // 50 minutes later: a new token, accepted (20 minutes have passed on the connection).
        clientClock.advance(by: 50 * 60)
        mockClock.advance(by: 50 * 60)
        let second = await client.send(Self.notification(2))
        #expect(second.status == 200)
        #expect(second.attempts == 1)

        // APNs' clock says the token is older than an hour; ours says 25 minutes: refresh and retry.
        clientClock.advance(by: 25 * 60)
        mockClock.advance(by: 61 * 60)
        let third = await client.send(Self.notification(3))
        #expect(third.status == 200)
        #expect(third.attempts == 2)

        #expect(fixture.stats.byReason["ExpiredProviderToken"] == 1)
        #expect(fixture.stats.byReason["TooManyProviderTokenUpdates"] == nil)
        await client.shutdown()
        try await fixture.stop()
    }

    @Test func certificateTrustWithPEMAndPKCS12() async throws {
        let authority = try CertificateAuthority.create()
        let directory = try ProjectPaths.temporaryDirectory("cert-auth")
        let caFile = directory.appendingPathComponent("client-ca.pem").path
        try (try authority.certificate.pem()).write(toFile: caFile, atomically: true, encoding: .utf8)
        let identity = try authority.issueClientCertificate(
            subject: DistinguishedName([.init("UID", MockFixture.bundleID), .init("CN", "Apple Push Services: \(MockFixture.bundleID)")])
        )
        let certPath = directory.appendingPathComponent("client.pem").path
        let keyPath = directory.appendingPathComponent("client.key").path
        let p12Path = directory.appendingPathComponent("client.p12").path
        try identity.writePEM(certificatePath: certPath, keyPath: keyPath)
        try identity.writePKCS12(to: p12Path, password: "s3cret")

        let fixture = try await MockFixture.start(tokenAuth: false) { $0.clientCAFile = caFile }
        for credential in [
            APNSCredential.certificate(.pemFiles(certificateChain: certPath, privateKey: keyPath, password: nil)),
            APNSCredential.certificate(.pkcs12File(p12Path, password: "s3cret")),
        ] {
            let client = try APNSClient(
                configuration: APNSClientConfiguration(
                    endpoint: APNSEndpoint(host: "127.0.0.1", port: fixture.port),
                    caFile: fixture.caFile,
                    connections: 2
                ),
                credential: credential
            )
            client.start()
            let outcomes = try await sendAll(client, count: 200)
            #expect(outcomes.values.allSatisfy { $0.count == 1 && $0[0].status == 200 })
        }
        #expect(fixture.stats.byStatus[200] == 400)
        try await fixture.stop()
    }

    @Test func aRequestWithoutAnswerTimesOutAndFreesItsStream() async throws {
        // The mock answers after 300 s; the client gives up after 300 ms. The outcome's reason shows
        // the timer fired, and the bound (well under the mock's latency) shows the client did not
        // wait for the answer. The unit stage runs every suite in one process, and long
        // synchronous tests beside this one once held both cooperative threads: the outcome of a
        // timer that fired at 300 ms reached this task 37 s later, past a 30 s answer.
        let fixture = try await MockFixture.start { configuration in
            configuration.maxStreams = 1
            configuration.latencyMilliseconds = 300_000
        }
        let client = try tokenClient(fixture, connections: 1, timeout: .milliseconds(300), retry: RetryPolicy(maxAttempts: 1))
        client.start()
        let started = ContinuousClock.now
        let outcome = await client.send(Self.notification(7))
        let elapsed = ContinuousClock.now - started
        #expect(outcome.status == 0)
        #expect(outcome.reasonString == "timeout")
        #expect(elapsed < .seconds(120), "the client waited \(elapsed)")
        let status = client.status()
        #expect(status.connections.allSatisfy { $0.reservedStreams == 0 }, "the timed-out stream's slot is free: \(status)")
        await client.shutdown()
        try await fixture.stop()
    }

    @Test func retryableFailuresAreRetriedThenReportedFinal() async throws {
        let fixture = try await MockFixture.start { $0.rate503 = 1 }
        let client = try tokenClient(fixture, connections: 1, retry: RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(5)))
        client.start()
        let outcome = await client.send(Self.notification(9))
        #expect(outcome.status == 503)
        #expect(outcome.reasonString == "ServiceUnavailable")
        #expect(outcome.attempts == 3)
        await client.shutdown()
        try await fixture.stop()
    }

    @Test func unreachableEndpointEndsAsConnectionFailure() async throws {
        // Held, never listening: connections are refused, and no other test can take the port.
        let reserved = try ReservedPort()
        let port = reserved.port
        let key = try PrivateKey.generateP256()
        let client = try APNSClient(
            configuration: APNSClientConfiguration(
                endpoint: APNSEndpoint(host: "127.0.0.1", port: port),
                connections: 1,
                connectSpacing: .zero,
                retryPolicy: RetryPolicy(maxAttempts: 1)
            ),
            credential: .token(keyID: "K", teamID: "T", key: key)
        )
        client.start()
        let outcome = Mutex<APNSOutcome?>(nil)
        client.send(Self.notification(1), options: APNSSendOptions(deadline: .now + .milliseconds(500))) { result in
            outcome.withLock { $0 = result }
        }
        try await waitUntil("an outcome", timeout: .seconds(10)) { outcome.withLock { $0 } != nil }
        #expect(outcome.withLock { $0 }?.status == 0)
        #expect(!client.status().isReady)
        await client.shutdown()
        withExtendedLifetime(reserved) {}
    }
}
