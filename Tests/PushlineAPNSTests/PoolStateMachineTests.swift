import PushlineAPNSCore
import Testing

@testable import PushlineAPNS

/// The pool's decisions without sockets: events in, actions out, the clock moved by hand. The
/// driver only records the actions and feeds events back; it changes nothing of a request (the
/// machine owns every request's state).
@Suite struct PoolStateMachineTests {
    /// A machine, a clock, and the actions it returned.
    struct Driver {
        var machine: PoolStateMachine
        var now: MonotonicInstant
        /// Requests on the wire, by connection.
        var inFlight: [Int: [OutgoingRequest]] = [:]
        /// Final outcomes by submission order (across batches).
        var outcomes: [Int: [APNSOutcome]] = [:]
        var transitions: [AppHealth.Transition] = []
        var expiredTokens: [UInt16] = []
        var connectionActions: [(Int, ConnectionLifecycle.Action)] = []
        var tick: MonotonicInstant?
        /// The provider token generation connections report having sent.
        var tokenGeneration: UInt16 = 1
        private var nextIndex = 0
        /// Where each batch's indices start in `outcomes`.
        private var firstIndex: [ObjectIdentifier: Int] = [:]

        init(
            connections: Int = 2,
            limit: Int = 100,
            tokenAuth: Bool = false,
            retry: RetryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(100)),
            health: AppHealth.Thresholds = AppHealth.Thresholds(minimumSystemic: 5, ratio: 0.5),
            maxRate: Int? = nil
        ) {
            now = .now
            var settings = PoolStateMachine.Settings(
                connections: connections,
                configuredCap: 1000,
                tokenAuth: tokenAuth,
                retryPolicy: retry,
                health: health,
                seed: 42
            )
            settings.maxRate = maxRate
            machine = PoolStateMachine(settings: settings, now: now)
            for slot in 0..<connections {
                apply(machine.connected(slot: slot, peerLimit: limit, now: now))
            }
        }

        mutating func apply(_ actions: PoolActions) {
            for (slot, requests) in actions.sends {
                inFlight[slot, default: []].append(contentsOf: requests)
            }
            for (batch, index, outcome) in actions.finishes {
                outcomes[firstIndex[ObjectIdentifier(batch)]! + index, default: []].append(outcome)
            }
            transitions += actions.transitions
            expiredTokens += actions.expiredTokens
            connectionActions += actions.connections.map { ($0.slot, $0.action) }
            if let at = actions.tick { tick = at }
        }

        mutating func submit(
            _ count: Int,
            options: APNSSendOptions = APNSSendOptions(),
            completion: RequestBatch.Completion = .closure { _, _ in }
        ) {
            let batch = PoolFixture.batch(count, options: options, now: now, completion: completion)
            firstIndex[ObjectIdentifier(batch)] = nextIndex
            nextIndex += count
            apply(machine.submit(batch, now: now))
        }

        var inFlightCount: Int { inFlight.values.reduce(0) { $0 + $1.count } }

        /// What a connection reports when `request`'s stream ended with `end`.
        func ended(_ request: OutgoingRequest, _ end: StreamEnd) -> StreamEnded {
            StreamEnded(id: request.id, sentAt: now, tokenGeneration: tokenGeneration, end: end)
        }

        /// Every request in flight on every connection ends with `end(request)`.
        mutating func answerAll(_ end: (OutgoingRequest) -> StreamEnd) {
            let batches = inFlight
            inFlight = [:]
            for (slot, requests) in batches.sorted(by: { $0.key < $1.key }) {
                apply(machine.streamsEnded(slot: slot, requests.map { ended($0, end($0)) }, now: now))
            }
        }

        mutating func answerAll(status: Int, reason: APNSReason? = nil) {
            answerAll { _ in .response(APNSResponse(status: status, reason: reason)) }
        }

        /// Moves the clock and delivers the tick the machine asked for, if it is due.
        mutating func advance(_ duration: Duration) {
            now = now + duration
            while let at = tick, at <= now {
                tick = nil
                apply(machine.tick(now: now))
            }
        }

        var finished: Int { outcomes.count }
    }

    static let ok = APNSResponse(status: 200)

    // MARK: Pacing

    /// 100 per second with bursts of 5: free streams do not speed it up, the machine asks for a
    /// tick when the next token is due, and a full second sends about 100 more.
    @Test func aPacedPoolSendsAtItsRateWhateverTheStreamsAllow() {
        var driver = Driver(connections: 2, limit: 1000, maxRate: 100)
        driver.submit(500)
        var sent = driver.inFlight.values.map(\.count).reduce(0, +)
        #expect(sent == 5, "the burst")
        #expect(driver.tick != nil, "a tick for the next token")
        var total = sent
        var checkpoints: [Int] = []
        for step in 1...100 {
            driver.answerAll(status: 200)
            driver.advance(.milliseconds(10))
            sent = driver.inFlight.values.map(\.count).reduce(0, +)
            total += sent
            if step % 25 == 0 { checkpoints.append(total) }
        }
        #expect(checkpoints == [30, 55, 80, 105], "about one per 10 ms after the burst: \(checkpoints)")
        #expect(driver.machine.queuedCount == 500 - total)
    }

    @Test func anUnpacedPoolFillsItsStreamsAtOnce() {
        var driver = Driver(connections: 2, limit: 100)
        driver.submit(500)
        #expect(driver.inFlight.values.map(\.count).reduce(0, +) == 200)
    }

    // MARK: Lanes

    /// A free stream always takes an urgent request first, on every connection, whatever bulk
    /// work queued before it.
    @Test func urgentRequestsTakeTheNextFreeStreamsAheadOfQueuedBulkWork() {
        var driver = Driver(connections: 2, limit: 5)
        driver.submit(100)
        #expect(driver.inFlightCount == 10)
        driver.submit(3, options: APNSSendOptions(lane: .urgent))
        #expect(driver.machine.queuedUrgent == 3)
        #expect(driver.inFlightCount == 10, "no stream is free yet")
        // One stream ends on each connection: the two free streams take urgent requests.
        for slot in 0..<2 {
            let done = driver.inFlight[slot]!.removeFirst()
            driver.apply(driver.machine.streamsEnded(slot: slot, [driver.ended(done, .response(Self.ok))], now: driver.now))
        }
        let sentLast = driver.inFlight.values.compactMap(\.last)
        #expect(sentLast.allSatisfy { $0.options.lane == .urgent }, "each connection's new stream carries an urgent request")
        #expect(driver.machine.queuedUrgent == 1)
        driver.answerAll(status: 200)
        #expect(driver.machine.queuedUrgent == 0, "the last urgent one went before any of the 88 bulk ones")
        #expect(driver.inFlight.values.flatMap { $0 }.filter { $0.options.lane == .urgent }.count == 1)
    }

    /// Pacing paces urgent requests too, but they leave first; a hold holds both lanes.
    @Test func urgentRequestsArePacedAndHeldWithTheirApp() {
        var paced = Driver(connections: 1, limit: 100, maxRate: 10)
        paced.submit(50)
        paced.submit(2, options: APNSSendOptions(lane: .urgent))
        var next: [OutgoingRequest] = []
        for _ in 0..<2 {
            paced.answerAll(status: 200)
            paced.advance(.milliseconds(100))
            next += paced.inFlight.values.flatMap { $0 }
        }
        #expect(next.count == 2 && next.allSatisfy { $0.options.lane == .urgent }, "the next two tokens go to urgent requests")

        var held = Driver(connections: 2, limit: 50)
        held.submit(20)
        held.answerAll(status: 403, reason: .invalidProviderToken)
        #expect(held.machine.health.isHeld)
        held.submit(1, options: APNSSendOptions(lane: .urgent))
        #expect(held.inFlightCount == 0, "an urgent request of a held app waits with it")
        held.advance(.milliseconds(1100))
        #expect(held.inFlight.values.flatMap { $0 }.map(\.options.lane) == [.urgent], "and it is the probe")
        held.answerAll(status: 200)
        #expect(!held.machine.health.isHeld)
    }

    // MARK: Routing and connection events

    @Test func sendsWithinEveryConnectionsLimitAndQueuesTheRest() {
        var driver = Driver(connections: 2, limit: 3)
        driver.submit(10)
        #expect(driver.inFlight[0]?.count == 3 && driver.inFlight[1]?.count == 3)
        #expect(driver.machine.queuedCount == 4)
        driver.answerAll(status: 200)
        #expect(driver.finished == 6)
        #expect(driver.inFlightCount == 4)
        driver.answerAll(status: 200)
        #expect(driver.finished == 10)
        #expect(driver.outcomes.values.allSatisfy { $0.count == 1 && $0[0].status == 200 })
    }

    @Test func refusedStreamsGoAgainAtOnceWithoutCountingAnAttempt() {
        var driver = Driver(connections: 1, limit: 2)
        driver.submit(2)
        driver.answerAll { _ in .unprocessed }
        #expect(driver.finished == 0)
        #expect(driver.inFlightCount == 2, "resent at once")
        driver.answerAll(status: 200)
        #expect(driver.outcomes.values.allSatisfy { $0.count == 1 && $0[0].attempts == 1 })
    }

    @Test func goAwayDrainsTheConnectionAndItsUnprocessedStreamsGoElsewhere() {
        var driver = Driver(connections: 2, limit: 2)
        driver.submit(4)
        driver.apply(driver.machine.goAway(slot: 0, now: driver.now))
        #expect(driver.machine.lifecycles[0].state == .draining)
        // One stream at or below last-stream-id is answered; the other was not processed.
        let onZero = driver.inFlight[0]!
        driver.inFlight[0] = nil
        driver.apply(
            driver.machine.streamsEnded(
                slot: 0,
                [driver.ended(onZero[0], .response(Self.ok)), driver.ended(onZero[1], .unprocessed)],
                now: driver.now
            )
        )
        #expect(driver.connectionActions.contains { $0.0 == 0 && $0.1 == .close }, "closes after its last stream")
        driver.answerAll(status: 200)
        #expect(driver.inFlight[0] == nil)
        driver.answerAll(status: 200)
        #expect(driver.finished == 4)
        #expect(driver.outcomes.values.allSatisfy { $0.count == 1 && $0[0].status == 200 && $0[0].attempts == 1 })
    }

    @Test func aLostConnectionRetriesItsStreamsAfterBackoffAndReconnects() {
        var driver = Driver(connections: 1, limit: 5)
        driver.submit(3)
        driver.answerAll { _ in .lost }
        driver.apply(driver.machine.closed(slot: 0, now: driver.now))
        #expect(driver.connectionActions.contains { if case .scheduleReconnect = $0.1 { true } else { false } })
        #expect(driver.inFlightCount == 0)
        driver.apply(driver.machine.backoffElapsed(slot: 0, now: driver.now))
        driver.apply(driver.machine.connected(slot: 0, peerLimit: 5, now: driver.now))
        driver.advance(.milliseconds(200))
        #expect(driver.inFlightCount == 3, "retried after the backoff")
        driver.answerAll(status: 200)
        #expect(driver.outcomes.values.allSatisfy { $0[0].status == 200 && $0[0].attempts == 2 })
    }

    // MARK: Single failures: retried as before

    @Test func aLone503AmongSuccessesIsRetriedOnAnotherConnection() {
        var driver = Driver(connections: 2, limit: 50)
        driver.submit(100)
        var first = true
        driver.answerAll { request in
            defer { first = false }
            return first ? .response(APNSResponse(status: 503, reason: .serviceUnavailable)) : .response(Self.ok)
        }
        #expect(!driver.machine.health.isHeld)
        #expect(driver.finished == 99)
        driver.advance(.milliseconds(200))
        #expect(driver.inFlight[1]?.count == 1, "503 prefers another connection")
        driver.answerAll(status: 200)
        #expect(driver.finished == 100)
    }

    @Test func expiredProviderTokenRefreshesOnceThenResends() {
        var driver = Driver(connections: 1, limit: 10, tokenAuth: true)
        driver.submit(1)
        driver.answerAll(status: 403, reason: .expiredProviderToken)
        #expect(driver.expiredTokens == [1], "the generation the connection reported")
        #expect(driver.inFlightCount == 1, "resent at once")
        #expect(!driver.machine.health.isHeld)
        driver.answerAll(status: 200)
        #expect(driver.outcomes[0]?.first?.status == 200)
    }
}
