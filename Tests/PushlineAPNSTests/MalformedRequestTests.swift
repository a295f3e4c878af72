import PushlineAPNSCore
import Testing

@testable import PushlineAPNS

/// Requests a server refuses as malformed (docs/apns.md): a stream reset with PROTOCOL_ERROR ends
/// its request at once; a connection ended with such an error names no request, so its
/// unanswered requests go again one per connection at a time until the one at fault is alone on
/// a connection that ends the same way. No sockets: the pool machine, driven by hand.
@Suite struct MalformedRequestTests {
    typealias Driver = PoolStateMachineTests.Driver

    /// Thresholds no test here reaches: the suspects alone, without the app's health (see
    /// `aServerThatEndsEveryConnectionHoldsTheAppAndNamesNobody`).
    static let noHold = AppHealth.Thresholds(minimumSystemic: 100_000)

    @Test func aStreamResetWithProtocolErrorEndsThatRequestAtOnceAndHoldsNothing() {
        var driver = Driver(connections: 2, limit: 50)
        driver.submit(40)
        let bad = driver.inFlight[0]![3].index
        driver.answerAll { $0.index == bad ? .malformed : .response(PoolStateMachineTests.ok) }
        #expect(driver.finished == 40)
        #expect(driver.outcomes[bad]?.map(\.noResponse) == [.protocolError])
        #expect(driver.outcomes[bad]?.first?.attempts == 1, "not resent")
        #expect(driver.outcomes[bad]?.first?.reasonString == "protocol_error")
        #expect(driver.outcomes.filter { $0.key != bad }.allSatisfy { $0.value.map(\.status) == [200] })
        #expect(driver.transitions.isEmpty, "one bad request does not hold its app")
    }

    /// The server ends whichever connection carries the bad request (as a strict server ends a
    /// connection whose header block it cannot accept), with hundreds of others in flight.
    @Test(arguments: [(0, 2), (137, 2), (399, 3), (250, 4)])
    func aConnectionEndedWithAProtocolErrorFindsItsOneBadRequest(bad: Int, connections: Int) {
        var driver = Driver(connections: connections, limit: 60, health: Self.noHold)
        driver.submit(400)
        var ends = 0
        var steps = 0
        while driver.finished < 400 && steps < 20_000 {
            steps += 1
            for slot in driver.inFlight.keys.sorted() {
                guard let requests = driver.inFlight.removeValue(forKey: slot), !requests.isEmpty else { continue }
                if requests.contains(where: { $0.index == bad }) {
                    ends += 1
                    endConnection(slot, with: requests, driver: &driver)
                } else {
                    let answers = requests.map { driver.ended($0, .response(PoolStateMachineTests.ok)) }
                    driver.apply(driver.machine.streamsEnded(slot: slot, answers, now: driver.now))
                }
            }
            driver.advance(.milliseconds(1))
        }
        #expect(driver.finished == 400)
        #expect(ends == 2, "the first end makes suspects; the second names the one alone among them")
        #expect(driver.outcomes[bad]?.map(\.noResponse) == [.protocolError])
        let others = driver.outcomes.filter { $0.key != bad }
        #expect(others.count == 399)
        #expect(others.allSatisfy { $0.value.map(\.status) == [200] }, "every other request answered once")
        #expect(driver.transitions.isEmpty)
        #expect(driver.machine.waiting == 0)
    }

    /// A server that ends every connection whatever it carries (not one bad request) holds the
    /// app, as lost connections do, instead of naming its requests one by one as the bad ones.
    @Test func aServerThatEndsEveryConnectionHoldsTheAppAndNamesNobody() {
        var driver = Driver(connections: 2, limit: 60)
        driver.submit(200)
        for slot in driver.inFlight.keys.sorted() {
            let requests = driver.inFlight.removeValue(forKey: slot)!
            endConnection(slot, with: requests, driver: &driver)
        }
        #expect(driver.transitions.contains { if case .held = $0 { true } else { false } }, "\(driver.transitions)")
        #expect(driver.finished == 0, "nobody is taken for the bad request")
        #expect(driver.inFlightCount <= 1, "one probe at most while held")
        // The server heals: the probe is answered, the hold ends, and every request is answered.
        for _ in 0..<2_000 where driver.finished < 200 {
            driver.answerAll(status: 200)
            driver.advance(.milliseconds(10))
        }
        #expect(driver.finished == 200)
        #expect(driver.outcomes.values.allSatisfy { $0.map(\.status) == [200] })
    }

    /// Suspects go one per connection: with every connection carrying a suspect, the others wait
    /// while fresh requests flow; a suspect answered frees its connection for the next.
    @Test func suspectsGoOnePerConnectionAheadOfTheQueue() {
        var driver = Driver(connections: 2, limit: 10, health: Self.noHold)
        driver.submit(10)
        let onZero = driver.inFlight.removeValue(forKey: 0)!
        let suspects = Set(onZero.map { Key($0) })
        endConnection(0, with: onZero, driver: &driver)
        #expect(driver.machine.waiting == onZero.count - 2, "one suspect went on each connection")
        driver.submit(20)
        var suspectsSeen = 0
        for _ in 0..<200 where driver.finished < 30 {
            for slot in driver.inFlight.keys.sorted() {
                let requests = driver.inFlight.removeValue(forKey: slot) ?? []
                let suspectsHere = requests.filter { suspects.contains(Key($0)) }.count
                #expect(suspectsHere <= 1, "at most one suspect on a connection")
                suspectsSeen += suspectsHere
                let answers = requests.map { driver.ended($0, .response(PoolStateMachineTests.ok)) }
                driver.apply(driver.machine.streamsEnded(slot: slot, answers, now: driver.now))
            }
        }
        #expect(suspectsSeen == onZero.count)
        #expect(driver.finished == 30)
        #expect(driver.outcomes.values.allSatisfy { $0.map(\.status) == [200] })
    }

    /// A request across batches.
    struct Key: Hashable {
        var batch: ObjectIdentifier
        var index: Int

        init(_ request: OutgoingRequest) {
            batch = ObjectIdentifier(request.batch)
            index = request.index
        }
    }

    @Test func shutdownEndsWaitingSuspects() {
        var driver = Driver(connections: 1, limit: 5, health: Self.noHold)
        driver.submit(5)
        let requests = driver.inFlight.removeValue(forKey: 0)!
        endConnection(0, with: requests, driver: &driver)
        driver.apply(driver.machine.shutDown(now: driver.now))
        #expect(driver.outcomes.values.filter { $0.first?.noResponse == .shutdown }.count == 4)
        #expect(driver.machine.waiting == 0)
    }

    /// The connection on `slot` ends with PROTOCOL_ERROR: GOAWAY, its requests' streams end, it
    /// closes and comes back.
    private func endConnection(_ slot: Int, with requests: [OutgoingRequest], driver: inout Driver) {
        driver.apply(driver.machine.goAway(slot: slot, now: driver.now))
        let ends = requests.map { driver.ended($0, .connectionError) }
        driver.apply(driver.machine.streamsEnded(slot: slot, ends, now: driver.now))
        driver.apply(driver.machine.closed(slot: slot, now: driver.now))
        driver.apply(driver.machine.backoffElapsed(slot: slot, now: driver.now))
        driver.apply(driver.machine.connected(slot: slot, peerLimit: 60, now: driver.now))
    }
}
