import Logging
import Synchronization

@testable import PushlineKafka
@testable import PushlineWorker

/// A producer that keeps every record in memory until the test acknowledges it
/// (`acknowledge`). Its topic handles come from a librdkafka client with no broker configured: it
/// opens no socket, and no record goes through it.
final class FakeProducer: ResultProducer {
    struct Record: Sendable {
        var topic: String
        var key: String?
        var value: String
        var headers: [KafkaHeader]
        var delivery: KafkaDelivery
    }

    private let topics: RDKafkaClient
    private let state = Mutex<(waiting: [Record], produced: [Record])>(([], []))

    init() throws {
        var logger = Logger(label: "fake-producer")
        logger.logLevel = .critical
        topics = try RDKafkaClient.makeProducer(properties: ["log_level": "0"], logger: logger, onStatistics: nil)
    }

    func produce(to topic: KafkaTopic, key: [UInt8]?, value: [UInt8], headers: [KafkaHeader], delivery: KafkaDelivery) throws(KafkaError) {
        add(
            Record(
                topic: topic.name,
                key: key.map { String(decoding: $0, as: UTF8.self) },
                value: String(decoding: value, as: UTF8.self),
                headers: headers,
                delivery: delivery
            )
        )
    }

    func produce(batchTo topic: KafkaTopic, count: Int, record: (Int) -> KafkaBatchRecord) -> [KafkaBatchRefusal] {
        for index in 0..<count {
            let made = record(index)
            add(
                Record(
                    topic: topic.name,
                    key: made.key.map { String(decoding: $0, as: UTF8.self) },
                    value: String(decoding: made.value, as: UTF8.self),
                    headers: [],
                    delivery: made.delivery
                )
            )
        }
        return []
    }

    func topic(_ name: String) throws(KafkaError) -> KafkaTopic {
        try KafkaTopic(handle: RDKafkaTopic(client: topics, name: name))
    }

    var outstandingCount: Int { state.withLock { $0.waiting.count } }

    func close(timeout: Duration) async {}

    private func add(_ record: Record) {
        state.withLock {
            $0.waiting.append(record)
            $0.produced.append(record)
        }
    }

    /// Every record produced so far, in order (acknowledged or not).
    var produced: [Record] { state.withLock { $0.produced } }

    /// Records not acknowledged yet.
    var waiting: [Record] { state.withLock { $0.waiting } }

    /// Acknowledges the first `count` records waiting (all by default), in order; returns how
    /// many it acknowledged.
    @discardableResult
    func acknowledge(_ count: Int = .max) -> Int {
        let taken = state.withLock { state in
            let taken = Array(state.waiting.prefix(count))
            state.waiting.removeFirst(taken.count)
            return taken
        }
        for (offset, record) in taken.enumerated() {
            record.delivery.delivered(partition: 0, offset: Int64(offset), timestampMilliseconds: nil)
        }
        return taken.count
    }
}
