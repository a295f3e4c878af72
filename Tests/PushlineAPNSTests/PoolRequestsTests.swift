import PushlineAPNSCore
import Testing

@testable import PushlineAPNS

@Suite struct PoolRequestsTests {
    /// `PoolRequests.ended` with what it works on, and its actions.
    struct Judge {
        var requests: PoolRequests
        var health: AppHealth
        var queued = LaneQueue()
        var random = SplitMix64(seed: 42)
        var actions = PoolActions()
        let now = MonotonicInstant.now

        init(tokenAuth: Bool = false, minimumSystemic: Int = 100) {
            requests = PoolFixture.requests(tokenAuth: tokenAuth)
            health = AppHealth(thresholds: AppHealth.Thresholds(minimumSystemic: minimumSystemic, ratio: 0.5), origin: now)
        }

        /// A request sent once (its attempt counted), on slot 0.
        mutating func sent(options: APNSSendOptions = APNSSendOptions()) -> RequestID {
            let id = PoolFixture.insert(1, options: options, into: &requests, now: now)[0]
            _ = requests.send(id)
            return id
        }

        mutating func end(_ id: RequestID, _ end: StreamEnd, tokenGeneration: UInt16 = 3) -> RequestNext {
            let stream = StreamEnded(id: id, sentAt: now, tokenGeneration: tokenGeneration, end: end)
            let (wasProbe, wasSuspect) = requests.streamEnded(stream, on: 0)
            return requests.ended(
                stream,
                on: 0,
                wasProbe: wasProbe,
                wasSuspect: wasSuspect,
                health: &health,
                queued: queued,
                random: &random,
                now: now,
                actions: &actions
            )
        }
    }

    static let serverError = StreamEnd.response(APNSResponse(status: 500, reason: .internalServerError))

    @Test func anAttemptCountsWhenSentAndNotWhenItCouldNotStart() {
        var judge = Judge()
        let id = judge.sent()
        #expect(judge.requests[id].attempts == 1)
        let wasProbe = judge.requests.notStarted(id)
        #expect(!wasProbe)
        #expect(judge.requests[id].attempts == 0)
    }

    /// A server error goes to the retry list after a backoff, until the attempts are used up.
    @Test func aServerErrorIsRetriedAfterBackoffUntilTheAttemptsAreUsedUp() {
        var judge = Judge()
        let id = judge.sent()
        guard case .retry(let at) = judge.end(id, Self.serverError) else {
            Issue.record("a retry after backoff")
            return
        }
        #expect(at > judge.now && at <= judge.now + .milliseconds(100))
        #expect(judge.requests[id].avoidSlot == 0, "a server error avoids the connection next time")
        _ = judge.requests.send(id)
        _ = judge.requests.send(id)
        guard case .finish(let outcome) = judge.end(id, Self.serverError) else {
            Issue.record("final after three attempts")
            return
        }
        #expect(outcome.status == 500 && outcome.attempts == 3)
    }

    /// Unprocessed requests go again at once without counting, up to the free resends; then
    /// they count and follow the retry policy.
    @Test func unprocessedRequestsGoAgainFreeUpToTheLimit() {
        var judge = Judge()
        let id = judge.sent()
        for resend in 1...2 {
            guard case .queue(atFront: true) = judge.end(id, .unprocessed) else {
                Issue.record("a free resend at the front, \(resend)")
                return
            }
            #expect(judge.requests[id].attempts == 0)
            _ = judge.requests.send(id)
        }
        guard case .retry = judge.end(id, .unprocessed) else {
            Issue.record("beyond the free resends: a counted retry")
            return
        }
        #expect(judge.requests[id].attempts == 1)
        #expect(judge.actions.freeResends == 3)
    }

    @Test func aMalformedRequestEndsAsAProtocolError() {
        var judge = Judge()
        let id = judge.sent()
        guard case .finish(let outcome) = judge.end(id, .malformed) else {
            Issue.record("final")
            return
        }
        #expect(outcome.noResponse == .protocolError)
    }

    /// An expired provider token asks for a refresh and goes again at once, once; a second
    /// expiry is judged as a systemic answer.
    @Test func anExpiredProviderTokenRefreshesOnceThenCounts() {
        var judge = Judge(tokenAuth: true)
        let id = judge.sent()
        let expired = StreamEnd.response(APNSResponse(status: 403, reason: .expiredProviderToken))
        guard case .queue(atFront: true) = judge.end(id, expired) else {
            Issue.record("a resend at once")
            return
        }
        #expect(judge.actions.expiredTokens == [3])
        _ = judge.requests.send(id)
        guard case .retry = judge.end(id, expired) else {
            Issue.record("a retry after backoff the second time")
            return
        }
        #expect(judge.requests[id].tokenRefreshes == 1)
    }

    /// The systemic answer that starts a hold sends the request, and everything waiting, into
    /// the hold; its attempt does not count.
    @Test func aSystemicAnswerThatStartsAHoldHoldsTheRequestAndEverythingWaiting() {
        var judge = Judge(minimumSystemic: 1)
        let waitingID = PoolFixture.insert(1, into: &judge.requests, now: judge.now)[0]
        judge.queued.append(waitingID, lane: .bulk, hasDeadline: false)
        let retryingID = judge.sent()
        judge.requests.scheduleRetry(retryingID, at: judge.now + .seconds(1))
        let id = judge.sent()
        guard case .hold = judge.end(id, Self.serverError) else {
            Issue.record("held")
            return
        }
        #expect(judge.health.isHeld)
        #expect(judge.actions.transitions.count == 1)
        #expect(judge.requests[id].attempts == 0)
        #expect(judge.requests[id].lastSystemic != nil)
        for request in [id, waitingID, retryingID] { #expect(judge.requests[request].heldSince == judge.now) }
    }

    /// The retry list gives back what is due, in order, and keeps the earliest of the rest.
    @Test func theRetryListGivesBackWhatIsDueInOrder() {
        var requests = PoolFixture.requests()
        let now = MonotonicInstant.now
        let ids = PoolFixture.insert(3, into: &requests, now: now)
        requests.scheduleRetry(ids[0], at: now + .seconds(3))
        requests.scheduleRetry(ids[1], at: now + .seconds(1))
        requests.scheduleRetry(ids[2], at: now + .seconds(2))
        #expect(requests.earliestRetry == now + .seconds(1))
        #expect(requests.waiting == 3)
        let early = requests.takeDueRetries(now: now)
        #expect(early.isEmpty)
        let due = requests.takeDueRetries(now: now + .seconds(2))
        #expect(due == [ids[1], ids[2]])
        #expect(requests.earliestRetry == now + .seconds(3))
        #expect(requests[ids[1]].retryAt == nil)
        requests.suspects.add(ids[1])
        let waiting = requests.takeAllWaiting()
        #expect(waiting == [ids[0], ids[1]])
        #expect(requests.earliestRetry == nil && requests.waiting == 0)
    }

    /// A request in flight when its connection was ended over a malformed request becomes a
    /// suspect, and counts toward the app's health.
    @Test func aRequestOnAConnectionEndedOverAMalformedRequestBecomesASuspect() {
        var judge = Judge(minimumSystemic: 1)
        let id = judge.sent()
        judge.requests.becomeSuspect(id, health: &judge.health, queued: judge.queued, now: judge.now, actions: &judge.actions)
        #expect(judge.requests.suspects.count == 1)
        #expect(judge.health.isHeld, "a lost request counts as a systemic answer")
        let next = judge.requests.suspects.next(for: 1)
        #expect(next == id)
    }

    /// Finishing takes the request out of the table with its outcome.
    @Test func aFinishedRequestLeaves() {
        var judge = Judge()
        let id = judge.sent()
        let now = judge.now
        judge.requests.finish(id, into: &judge.actions) { $0.outcome(.shutdown, at: now) }
        #expect(judge.requests.count == 0)
        #expect(judge.actions.finishes.map(\.outcome.noResponse) == [.shutdown])
    }
}
