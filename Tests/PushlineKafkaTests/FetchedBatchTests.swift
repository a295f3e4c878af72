import Testing

@testable import PushlineKafka

/// How a poll's fetched records are split by lane (no I/O): taken ones keep their order in their
/// lane, dropped ones go, and each record is completed exactly once.
@Suite struct FetchedBatchTests {
    /// A fetched record: `taken` is set when the machine takes it (as a record's generation is).
    struct Fetched: Equatable {
        var number: Int
        var taken = false
    }

    private func split(_ lanes: [ConsumerLane?]) -> (bulk: [Fetched], priority: [Fetched], calls: [Int]) {
        var records = lanes.indices.map { Fetched(number: $0) }
        var calls: [Int] = []
        let priority = FetchedBatch.split(&records) { record in
            calls.append(record.number)
            record.taken = true
            return lanes[record.number]
        }
        return (records, priority, calls)
    }

    @Test func everyRecordOfTheBulkLaneStaysInPlace() {
        let result = split([.bulk, .bulk, .bulk])
        #expect(result.bulk == [0, 1, 2].map { Fetched(number: $0, taken: true) })
        #expect(result.priority.isEmpty)
        #expect(result.calls == [0, 1, 2])
    }

    @Test func lanesInterleavedWithDropsKeepTheirOrder() {
        let lanes: [ConsumerLane?] = [nil, .priority, .bulk, nil, .bulk, .priority, .priority, .bulk, nil]
        let result = split(lanes)
        #expect(result.bulk.map(\.number) == [2, 4, 7])
        #expect(result.priority.map(\.number) == [1, 5, 6])
        #expect(result.bulk.allSatisfy(\.taken) && result.priority.allSatisfy(\.taken))
        #expect(result.calls == Array(lanes.indices))
    }

    @Test func aBatchDroppedWholeLeavesNothing() {
        let result = split([nil, nil])
        #expect(result.bulk.isEmpty && result.priority.isEmpty)
        #expect(result.calls == [0, 1])
    }

    @Test func randomBatchesMatchAFilter() {
        var generator = SeededGenerator(seed: 29)
        let choices: [ConsumerLane?] = [.bulk, .priority, nil]
        for _ in 0..<200 {
            let lanes = (0..<Int.random(in: 0...40, using: &generator)).map { _ in choices.randomElement(using: &generator)! }
            let result = split(lanes)
            #expect(result.bulk.map(\.number) == lanes.indices.filter { lanes[$0] == .bulk })
            #expect(result.priority.map(\.number) == lanes.indices.filter { lanes[$0] == .priority })
        }
    }
}
