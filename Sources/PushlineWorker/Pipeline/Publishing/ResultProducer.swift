import PushlineKafka

/// What the result publisher needs of a Kafka producer: `KafkaProducer`, or a test's fake (records
/// kept in memory, acknowledged when the test says). Called once per record produced on its own,
/// and once per topic for a run's records (`ResultPublisher+Batch.swift`).
protocol ResultProducer: Sendable {
    func produce(to topic: KafkaTopic, key: [UInt8]?, value: [UInt8], headers: [KafkaHeader], delivery: KafkaDelivery) throws(KafkaError)
    func produce(batchTo topic: KafkaTopic, count: Int, record: (Int) -> KafkaBatchRecord) -> [KafkaBatchRefusal]
    func topic(_ name: String) throws(KafkaError) -> KafkaTopic
    /// Records not yet acknowledged.
    var outstandingCount: Int { get }
    /// Flushes for up to `timeout`, then closes.
    func close(timeout: Duration) async
}

extension KafkaProducer: ResultProducer {
    func produce(to topic: KafkaTopic, key: [UInt8]?, value: [UInt8], headers: [KafkaHeader], delivery: KafkaDelivery) throws(KafkaError) {
        try send(to: topic, key: key, value: value, headers: headers, delivery: delivery)
    }

    func produce(batchTo topic: KafkaTopic, count: Int, record: (Int) -> KafkaBatchRecord) -> [KafkaBatchRefusal] {
        send(batchTo: topic, count: count, record: record)
    }
}
