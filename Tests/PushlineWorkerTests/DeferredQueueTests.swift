import PushlineAPNS
import PushlineAPNSCore
import PushlineKafka
import Testing

@testable import PushlineWorker

/// The parked jobs a worker holds until their app can send (`DeferredQueue`), and the headers of
/// their copies (`ParkedRecordHeaders`), without I/O.
@Suite struct DeferredQueueTests {
    static func entry(
        _ app: String,
        offset: Int64,
        lane: SendLane = .bulk,
        weight: Int = 1,
        notBefore: Int64 = 0,
        partition: Int32 = 0
    )
        -> DeferredQueue.Entry
    {
        let id = RecordID(topic: "push.jobs.deferred", partition: partition, offset: offset, generation: 1)
        let record = KafkaRecord(id: id, key: nil, value: [], headers: [], timestampMilliseconds: nil)
        let job = Job(id: "\(app)-\(offset)", tokens: [], app: app, topic: "t", pushType: .alert, priority: .immediate, payload: [])
        return DeferredQueue.Entry(
            record: DecodedRecord(record: record, job: .success(job)),
            app: app,
            lane: lane,
            notBefore: notBefore,
            weight: weight
        )
    }

    static func offsets(_ entries: [DeferredQueue.Entry]) -> [Int64] { entries.map { $0.record.record.id.offset } }

    @Test func anAppsEntriesGoInOrderUrgentFirstWithinItsRoom() {
        var queue = DeferredQueue()
        for offset in 0..<5 { queue.append(Self.entry("a", offset: Int64(offset), weight: 2)) }
        queue.append(Self.entry("a", offset: 9, lane: .urgent, weight: 2))
        queue.append(Self.entry("b", offset: 7))
        #expect(queue.count == 7)
        #expect(queue.appsWaiting == ["a", "b"])
        #expect(Self.offsets(queue.take(app: "a", room: 5, now: 0)) == [9, 0], "urgent first, within the room")
        #expect(Self.offsets(queue.take(app: "a", room: 0, now: 0)).isEmpty)
        #expect(Self.offsets(queue.take(app: "a", room: 1, now: 0)) == [1], "the first passes the room: a job goes whole")
        #expect(Self.offsets(queue.take(app: "a", room: 100, now: 0)) == [2, 3, 4])
        #expect(queue.count(of: "a") == 0 && queue.count == 1)
        #expect(queue.appsWaiting == ["b"])
    }

    @Test func aJobWaitsForItsNotBeforeTimeAndStopsItsLane() {
        var queue = DeferredQueue()
        queue.append(Self.entry("a", offset: 0, notBefore: 100))
        queue.append(Self.entry("a", offset: 1, notBefore: 0))
        #expect(queue.take(app: "a", room: 10, now: 99).isEmpty, "the parked order is kept")
        #expect(Self.offsets(queue.take(app: "a", room: 10, now: 100)) == [0, 1])
    }

    /// A cancel takes the parked jobs it names out of every app, whatever their room and
    /// not-before time; the others keep their order.
    @Test func aCancelTakesItsJobsOutWhateverTheirRoomOrTime() {
        var queue = DeferredQueue()
        for offset in 0..<4 { queue.append(Self.entry("a", offset: Int64(offset), notBefore: 1_000)) }
        queue.append(Self.entry("a", offset: 8, lane: .urgent))
        queue.append(Self.entry("b", offset: 9))
        let taken = queue.take { entry in [1, 3, 8, 9].contains(entry.record.record.id.offset) }
        #expect(Self.offsets(taken) == [8, 1, 3, 9])
        #expect(queue.count == 2)
        #expect(queue.appsWaiting == ["a"])
        #expect(Self.offsets(queue.take(app: "a", room: 10, now: 1_000)) == [0, 2])
        #expect(queue.take { _ in true }.isEmpty && queue.count == 0)
    }

    @Test func aRevokeDropsThePartitionsEntries() {
        var queue = DeferredQueue()
        for offset in 0..<4 { queue.append(Self.entry("a", offset: Int64(offset), partition: Int32(offset % 2))) }
        _ = queue.take(app: "a", room: 1, now: 0)
        let dropped = queue.drop(partitions: [TopicPartition(topic: "push.jobs.deferred", partition: 1)])
        #expect(dropped == 2 && queue.count == 1)
        #expect(Self.offsets(queue.take(app: "a", room: 10, now: 0)) == [2])
    }

    /// Long random sequences against a plain model: every entry is taken once, in its app's and
    /// lane's order, or dropped by a revoke, and the counts agree throughout.
    @Test func randomSequencesAgreeWithAModel() {
        var random = SplitMix64(seed: 51)
        var queue = DeferredQueue()
        var model: [String: [DeferredQueue.Entry]] = [:]
        var next: Int64 = 0
        for _ in 0..<100_000 {
            let app = ["a", "b", "c"][Int(random.next() % 3)]
            switch random.next() % 4 {
            case 0, 1:
                let lane: SendLane = random.next() % 5 == 0 ? .urgent : .bulk
                let entry = Self.entry(
                    app,
                    offset: next,
                    lane: lane,
                    weight: Int(random.next() % 3) + 1,
                    partition: Int32(random.next() % 3)
                )
                next += 1
                queue.append(entry)
                model[app, default: []].append(entry)
            case 2:
                let room = Int(random.next() % 6)
                let taken = queue.take(app: app, room: room, now: 0)
                let waiting = model[app] ?? []
                let ordered = waiting.filter { $0.lane == .urgent } + waiting.filter { $0.lane == .bulk }
                // The plain model: in order, the first always when there is room, stop at the
                // first that does not fit.
                var expected: [DeferredQueue.Entry] = []
                var left = room
                for entry in ordered {
                    guard left > 0, entry.weight <= left || expected.isEmpty else { break }
                    expected.append(entry)
                    left -= entry.weight
                }
                #expect(Self.offsets(taken) == Self.offsets(expected))
                let takenOffsets = Set(Self.offsets(taken))
                model[app] = waiting.filter { !takenOffsets.contains($0.record.record.id.offset) }
            default:
                let partition = TopicPartition(topic: "push.jobs.deferred", partition: Int32(random.next() % 3))
                let dropped = queue.drop(partitions: [partition])
                var modelDropped = 0
                for (name, entries) in model {
                    let kept = entries.filter { $0.record.record.id.topicPartition != partition }
                    modelDropped += entries.count - kept.count
                    model[name] = kept
                }
                #expect(dropped == modelDropped)
            }
            #expect(queue.count == model.values.reduce(0) { $0 + $1.count })
        }
    }

    @Test func headersCarryTheFirstSourceAppLaneAndTimes() {
        let headers = ParkedRecordHeaders(
            source: RecordSource(topic: "push.jobs", partition: 3, offset: 42),
            app: "tenant-b",
            lane: .urgent,
            notBefore: 1_700_000_000_500,
            parkedAt: 1_700_000_000_000
        )
        #expect(ParkedRecordHeaders(headers.headers) == headers)
        #expect(ParkedRecordHeaders([]) == nil, "a record no worker wrote")
        var broken = headers.headers
        broken[0] = KafkaHeader(key: ParkedRecordHeaders.sourceKey, value: Array("push.jobs/x/42".utf8))
        #expect(ParkedRecordHeaders(broken) == nil)
        #expect(RecordSource(coordinates: "a/b/1/2") == RecordSource(topic: "a/b", partition: 1, offset: 2))
    }
}
