import Testing

@testable import PushlineKafka

/// `ConsumerCore`'s life without a broker: where the consumer is (`ConsumerState`: a join
/// pending, a close asked for, a fatal error, the close's phases, closed) as the machine moves it,
/// and the settings it gets from a configuration. The clock is an input; nothing sleeps.
@Suite struct ConsumerLifecycleTests {
    let jobs0 = TopicPartition(topic: "jobs", partition: 0)
    let start = ContinuousClock.now

    func at(_ milliseconds: Int) -> ContinuousClock.Instant {
        start + .milliseconds(milliseconds)
    }

    func configuration(
        properties: [String: String] = [:],
        closeJoinWait: Duration = .zero,
        stalledJoinLimit: Duration = .zero
    ) -> KafkaConsumerConfiguration {
        KafkaConsumerConfiguration(
            bootstrapServers: "unused:9092",
            groupID: "tests",
            topics: ["jobs"],
            properties: properties,
            closeJoinWait: closeJoinWait,
            stalledJoinLimit: stalledJoinLimit
        )
    }

    func machine(_ configuration: KafkaConsumerConfiguration) -> ConsumerStateMachine {
        ConsumerStateMachine(settings: ConsumerStateMachine.Settings(configuration), now: start)
    }

    /// With the broker guards on, as the worker sets them for Tansu.
    func guarded() -> ConsumerStateMachine {
        machine(configuration(closeJoinWait: .seconds(15), stalledJoinLimit: .seconds(22)))
    }

    func take(_ machine: inout ConsumerStateMachine, _ offset: Int64) -> RecordID? {
        machine.take(jobs0, offset: offset)?.id
    }

    // MARK: - Settings

    @Test func settingsTakeEveryValueFromTheConfiguration() {
        let settings = ConsumerStateMachine.Settings(configuration())
        #expect(settings.closeJoinWait == .zero, "the broker guards are off unless configured")
        #expect(settings.stalledJoinLimit == .zero)
        #expect(settings.revokeDrainTimeout == .seconds(10))
        #expect(settings.commitInterval == .milliseconds(200))
        #expect(settings.fullPauseAfter == .seconds(1))
        #expect(!settings.cooperativeByConfiguration, "roundrobin is eager")
        #expect(settings.firstGeneration == 1)
        let guarded = ConsumerStateMachine.Settings(configuration(closeJoinWait: .seconds(15), stalledJoinLimit: .seconds(22)))
        #expect(guarded.closeJoinWait == .seconds(15))
        #expect(guarded.stalledJoinLimit == .seconds(22))
        let sticky = ConsumerStateMachine.Settings(configuration(properties: ["partition.assignment.strategy": "cooperative-sticky"]))
        #expect(sticky.cooperativeByConfiguration)
        let kip848 = ConsumerStateMachine.Settings(
            configuration(properties: ["group.protocol": "consumer"], closeJoinWait: .seconds(15), stalledJoinLimit: .seconds(22))
        )
        #expect(kip848.cooperativeByConfiguration)
        #expect(kip848.closeJoinWait == .zero && kip848.stalledJoinLimit == .zero, "the consumer protocol has no join rounds")
    }

    /// The configuration's defaults: a close leaves at once even while a join may be pending, and
    /// a join is never abandoned.
    @Test func withTheDefaultsACloseDoesNotWaitForAJoinAndNoJoinIsAbandoned() throws {
        var machine = machine(configuration())
        for second in [0, 100, 1_000, 10_000] {
            guard case .poll(let plan) = machine.tick(.init(now: at(second * 1000))) else {
                Issue.record("expected a poll plan")
                return
            }
            #expect(plan.actions.isEmpty, "no rejoin at \(second) s")
        }
        machine.requestClose(deadline: at(10_000_010))
        _ = machine.tick(.init(now: at(10_000_000)))
        #expect(machine.joinPending)
        guard case .drain(_, nil, nil) = machine.closeStep(now: at(10_000_000), assignmentLost: false) else {
            Issue.record("expected the drain at once")
            return
        }
    }

    // MARK: - The state

    @Test func aJoinIsPendingUntilAnAssignmentAndAgainAfterEachRevoke() {
        var machine = guarded()
        #expect(machine.state == .running(joinPending: true))
        _ = machine.assigned([jobs0], cooperative: false, now: at(0))
        #expect(machine.state == .running(joinPending: false))
        let (drain, _) = machine.beginRevoke([jobs0], lost: false, now: at(10))
        _ = machine.finishRevoke([jobs0], lost: false, cooperative: false, drain: drain, unfinished: 0, now: at(10))
        #expect(machine.state == .running(joinPending: true))
        _ = machine.assigned([jobs0], cooperative: false, now: at(20))
        _ = machine.rebalanceFailed(cooperative: false, now: at(30))
        #expect(machine.state == .running(joinPending: true), "a failed rebalance rejoins too")
    }

    /// A close asked from another thread takes effect at the poll thread's next look: until then
    /// records are still handed out and a revoke still gets the whole drain timeout.
    @Test func aCloseAskedForBeginsAtThePollThreadsNextLook() throws {
        var machine = guarded()
        _ = machine.assigned([jobs0], cooperative: true, now: at(0))
        machine.requestClose(deadline: at(5_000))
        machine.requestClose(deadline: at(9_000))
        #expect(machine.state == .closeAsked(CloseRequest(deadline: at(5_000), failed: false), joinPending: false), "the first deadline")
        #expect(machine.isRunning)
        let handedOut = take(&machine, 0)
        #expect(handedOut != nil, "still handed out")
        let (drain, _) = machine.beginRevoke([jobs0], lost: false, now: at(100))
        #expect(drain.deadline == at(10_100), "the revoke drain timeout, not the close deadline")
        _ = machine.finishRevoke([jobs0], lost: false, cooperative: true, drain: drain, unfinished: 0, now: at(100))
        #expect(machine.joinPending, "librdkafka rejoins: the close has not begun")
        guard case .close = machine.tick(.init(now: at(110))) else {
            Issue.record("expected the close to begin")
            return
        }
        #expect(machine.state == .closing(CloseRequest(deadline: at(5_000), failed: false), joinPending: true))
        #expect(!machine.isRunning)
        _ = machine.assigned([jobs0], cooperative: true, now: at(120))
        let dropped = take(&machine, 1)
        #expect(dropped == nil, "nothing is handed out once the close began")
        let (closingDrain, _) = machine.beginRevoke([jobs0], lost: false, now: at(130))
        #expect(closingDrain.deadline == at(5_000), "a revoke while closing waits until the close deadline")
    }

    @Test func aFatalErrorIsReportedOnceKeepsTheFirstDeadlineAndWaitsForNoJoin() throws {
        var machine = guarded()
        machine.requestClose(deadline: at(5_000))
        let first = machine.fail(now: at(10))
        let second = machine.fail(now: at(20))
        #expect(first, "the first fatal error is reported")
        #expect(!second, "once")
        #expect(machine.state == .closeAsked(CloseRequest(deadline: at(5_000), failed: true), joinPending: true))
        #expect(machine.failed)
        _ = machine.tick(.init(now: at(30)))
        guard case .drain(_, nil, nil) = machine.closeStep(now: at(30), assignmentLost: false) else {
            Issue.record("a failed consumer leaves without waiting for its join")
            return
        }
        #expect(machine.state == .draining(CloseRequest(deadline: at(5_000), failed: true)))
        #expect(!machine.joinPending)
    }

    @Test func aJoinWaitThatRunsOutLeavesAnyway() throws {
        var machine = guarded()
        machine.requestClose(deadline: at(60_000))
        _ = machine.tick(.init(now: at(0)))
        guard case .awaitJoin(starting: true, _) = machine.closeStep(now: at(0), assignmentLost: false) else {
            Issue.record("expected to wait for the join")
            return
        }
        guard case .awaitJoin(starting: false, _) = machine.closeStep(now: at(14_999), assignmentLost: false) else {
            Issue.record("expected to keep waiting")
            return
        }
        guard case .drain(_, nil, let joinWait) = machine.closeStep(now: at(15_000), assignmentLost: false) else {
            Issue.record("expected the drain once the bound passed")
            return
        }
        #expect(joinWait == .init(waited: .seconds(15), completed: false))
        guard case .leave(let last, 0) = machine.closeStep(now: at(15_010), assignmentLost: false) else {
            Issue.record("expected to leave")
            return
        }
        #expect(last.isEmpty)
        #expect(machine.state == .leaving(CloseRequest(deadline: at(60_000), failed: false)))
    }

    /// `ConsumerCore.close` answers at once once the machine says it closed; a later request
    /// changes nothing.
    @Test func aClosedConsumerStaysClosed() throws {
        var machine = machine(configuration())
        machine.requestClose(deadline: at(0))
        #expect(!machine.isClosed)
        _ = machine.tick(.init(now: at(0)))
        _ = machine.closeStep(now: at(0), assignmentLost: false)
        _ = machine.closeStep(now: at(0), assignmentLost: false)
        machine.closed()
        #expect(machine.isClosed)
        machine.requestClose(deadline: at(10))
        let failed = machine.fail(now: at(10))
        #expect(!failed, "nothing to report once closed")
        #expect(machine.state == .closed)
        let late = take(&machine, 0)
        #expect(late == nil)
    }
}
