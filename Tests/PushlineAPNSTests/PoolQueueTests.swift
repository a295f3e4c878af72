import PushlineAPNSCore
import Testing

@testable import PushlineAPNS

@Suite struct PoolQueueTests {
    /// The parts of a pool `PoolQueue.drain` works on, and its actions.
    struct Parts {
        var queue = PoolQueue(sweepInterval: .milliseconds(100), holdLimit: .seconds(10))
        var requests = PoolFixture.requests()
        var connections = PoolConnectionsTests.connections(2, limits: [3, 5])
        var health: AppHealth
        var pacing: Pacing
        var actions = PoolActions()
        let now: MonotonicInstant

        init(now: MonotonicInstant = .now, maxRate: Int? = nil) {
            self.now = now
            health = AppHealth(thresholds: AppHealth.Thresholds(minimumSystemic: 1, ratio: 0.5), origin: now)
            pacing = Pacing(rate: maxRate, now: now)
        }

        mutating func enqueue(_ count: Int, options: APNSSendOptions = APNSSendOptions(), atFront: Bool = false) -> [RequestID] {
            let ids = PoolFixture.insert(count, options: options, into: &requests, now: now)
            for id in ids {
                let queued = queue.enqueue(
                    id,
                    atFront: atFront,
                    requests: &requests,
                    held: health.isHeld,
                    now: now,
                    actions: &actions
                )
                #expect(queued)
            }
            return ids
        }

        mutating func drain(at time: MonotonicInstant? = nil) {
            queue.drain(
                connections: &connections,
                requests: &requests,
                health: &health,
                pacing: &pacing,
                now: time ?? now,
                actions: &actions
            )
        }

        var sent: [Int: [RequestID]] {
            actions.sends.reduce(into: [:]) { $0[$1.slot, default: []] += $1.requests.map(\.id) }
        }
    }

    /// Urgent requests first, each to the connection with the most free streams at that moment,
    /// until no connection has room; each send counts an attempt.
    @Test func aDrainHandsUrgentRequestsOutFirstToTheConnectionsWithRoom() {
        var parts = Parts()
        let bulk = parts.enqueue(6)
        let urgent = parts.enqueue(3, options: APNSSendOptions(lane: .urgent))
        parts.drain()
        let sent = parts.sent
        #expect(sent.values.map(\.count).reduce(0, +) == 8, "3 + 5 streams")
        #expect(Array(sent[1]!.prefix(2)) == Array(urgent.prefix(2)), "the first two urgent ones to the freer connection")
        #expect(sent[0]!.first == urgent[2])
        #expect(Array(parts.queue.lanes) == [bulk[5]])
        #expect(parts.requests[urgent[0]].attempts == 1)
        #expect(parts.requests[bulk[5]].attempts == 0)
    }

    /// A queued request whose deadline passed ends `expired` instead of going out.
    @Test func aRequestPastItsDeadlineEndsInsteadOfGoingOut() {
        var parts = Parts()
        _ = parts.enqueue(2, options: APNSSendOptions(deadline: parts.now + .seconds(1)))
        parts.drain(at: parts.now + .seconds(2))
        #expect(parts.actions.sends.isEmpty)
        #expect(parts.actions.finishes.map(\.outcome.noResponse) == [.expired, .expired])
        #expect(parts.requests.count == 0)
        #expect(parts.queue.lanes.withDeadline == 0)
    }

    /// A held app sends one probe, when its backoff allows, and nothing else.
    @Test func aHeldAppSendsOneProbeAtATime() {
        var parts = Parts()
        _ = parts.health.recordSystemic(status: 500, reason: "InternalServerError", now: parts.now)
        let ids = parts.enqueue(4)
        parts.drain()
        #expect(parts.actions.sends.isEmpty, "the probe's backoff")
        parts.drain(at: parts.now + .seconds(1))
        #expect(parts.actions.sends.flatMap(\.requests).map(\.id) == [ids[0]])
        #expect(parts.requests[ids[0]].isProbe)
        #expect(parts.health.probeInFlight)
        parts.drain(at: parts.now + .seconds(2))
        #expect(parts.actions.sends.count == 1, "one probe at a time")
    }

    @Test func aPacedDrainStopsAtTheBurst() {
        var parts = Parts(maxRate: 40)  // burst: 2
        _ = parts.enqueue(5)
        parts.drain()
        #expect(parts.actions.sends.flatMap(\.requests).count == 2)
        let value1 = parts.pacing.tickWanted(now: parts.now)
        #expect(value1 == parts.now + .milliseconds(25))
    }

    /// Requests of a withdrawn group end `withdrawn`, queued or queued later; others stay.
    @Test func aWithdrawnGroupsRequestsEndQueuedOrLater() {
        var parts = Parts()
        let mine = parts.enqueue(2, options: APNSSendOptions(group: 7))
        let others = parts.enqueue(1, options: APNSSendOptions(group: 8))
        parts.queue.withdraw([7], requests: &parts.requests, now: parts.now, actions: &parts.actions)
        #expect(parts.actions.finishes.map(\.outcome.noResponse) == [.withdrawn, .withdrawn])
        #expect(Array(parts.queue.lanes) == others)
        let late = PoolFixture.insert(1, options: APNSSendOptions(group: 7), into: &parts.requests, now: parts.now)[0]
        let queued = parts.queue.enqueue(
            late,
            atFront: true,
            requests: &parts.requests,
            held: false,
            now: parts.now,
            actions: &parts.actions
        )
        #expect(!queued)
        #expect(parts.actions.finishes.count == 3)
        #expect(parts.requests.count == 1)
        _ = mine
    }

    /// A sweep is wanted only while requests with a deadline are queued (or the app is held),
    /// and ends only those past it.
    @Test func theSweepRunsOnlyWhileQueuedRequestsHaveADeadline() {
        var parts = Parts()
        _ = parts.enqueue(3)
        let value2 = parts.queue.sweepWanted(held: false, now: parts.now)
        #expect(value2 == nil)
        let value3 = parts.queue.sweepWanted(held: true, now: parts.now)
        #expect(value3 == parts.now + .milliseconds(100))
        let soon = parts.enqueue(1, options: APNSSendOptions(deadline: parts.now + .milliseconds(150)))
        let later = parts.enqueue(1, options: APNSSendOptions(deadline: parts.now + .seconds(5)))
        let first = parts.now + .milliseconds(100)
        let value4 = parts.queue.sweepWanted(held: false, now: parts.now)
        #expect(value4 == first, "the one already scheduled")
        parts.queue.sweepIfDue(held: false, requests: &parts.requests, now: first, actions: &parts.actions)
        #expect(parts.actions.finishes.isEmpty)
        let second = parts.queue.sweepWanted(held: false, now: first)
        #expect(second == first + .milliseconds(100))
        parts.queue.sweepIfDue(held: false, requests: &parts.requests, now: second!, actions: &parts.actions)
        #expect(parts.actions.finishes.map(\.outcome.noResponse) == [.expired])
        #expect(!Array(parts.queue.lanes).contains(soon[0]))
        #expect(Array(parts.queue.lanes).contains(later[0]))
        #expect(parts.queue.lanes.withDeadline == 1)
    }

    /// In a hold, a request that waited the hold limit ends with the last systemic answer.
    @Test func aRequestHeldPastTheHoldLimitEndsWithItsLastSystemicAnswer() {
        var parts = Parts()
        _ = parts.health.recordSystemic(status: 500, reason: "InternalServerError", now: parts.now)
        let ids = parts.enqueue(1)
        parts.requests[ids[0]].lastSystemic = .response(APNSResponse(status: 500, reason: .internalServerError))
        #expect(parts.requests[ids[0]].heldSince == parts.now)
        let due = parts.queue.sweepWanted(held: true, now: parts.now + .seconds(10))!
        parts.queue.sweepIfDue(held: true, requests: &parts.requests, now: due, actions: &parts.actions)
        #expect(parts.actions.finishes.map(\.outcome.response?.status) == [500])
        #expect(parts.queue.isEmpty)
    }
}
