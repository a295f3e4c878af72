import Logging
import PushlineKafka
import Synchronization
import Testing

/// The producer against librdkafka's in-process mock cluster (no broker process).
@Suite struct ProducerMockClusterTests {
    func makeProducer(_ extra: [String: String] = [:]) throws -> KafkaProducer {
        var logger = Logger(label: "producer-mock")
        logger.logLevel = .warning
        let properties = ["test.mock.num.brokers": "1"].merging(extra) { $1 }
        return try KafkaProducer(
            configuration: KafkaProducerConfiguration(bootstrapServers: "mock:9092", properties: properties),
            logger: logger
        )
    }

    @Test func deliveryReportsCarryContiguousOffsetsPerPartition() async throws {
        let producer = try makeProducer()
        let reports = Mutex<[Result<DeliveryReport, KafkaError>]>([])
        for index in 0..<500 {
            try producer.send(
                topic: "mock-topic",
                key: Array("k\(index % 17)".utf8),
                value: Array("v\(index)".utf8),
                headers: [KafkaHeader(key: "n", value: Array("\(index)".utf8)), KafkaHeader(key: "empty", value: nil)]
            ) { result in reports.withLock { $0.append(result) } }
        }
        try await producer.flush(timeout: .seconds(20))
        let all = reports.withLock { $0 }
        #expect(all.count == 500)
        let delivered = all.compactMap { try? $0.get() }
        #expect(delivered.count == 500)
        for (_, partition) in Dictionary(grouping: delivered, by: \.partition) {
            #expect(partition.map(\.offset).sorted() == Array(0..<Int64(partition.count)))
        }
        let single = try await producer.send(topic: "mock-topic", key: nil, value: [1, 2, 3])
        #expect(single.topic == "mock-topic" && single.offset >= 0)
        await producer.close()
    }

    /// A queue of 4 records and 200 senders at once: at most 4 fit, so the rest are refused as
    /// full and wait for delivery reports to free room (no timed retry); every record is
    /// delivered once.
    @Test func aFullQueueWaitsForRoomAndLosesNothing() async throws {
        let producer = try makeProducer(["queue.buffering.max.messages": "4", "linger.ms": "5"])
        let offsets = try await withThrowingTaskGroup(of: Int64.self) { group in
            for index in 0..<200 {
                group.addTask {
                    try await producer.send(topic: "mock-full", partition: 0, key: nil, value: Array("\(index)".utf8)).offset
                }
            }
            return try await group.reduce(into: [Int64]()) { $0.append($1) }
        }
        #expect(offsets.sorted() == Array(0..<200))
        await producer.close()
    }

    @Test func oversizedRecordIsRejectedWithATypedPermanentError() async throws {
        let producer = try makeProducer(["message.max.bytes": "2000"])
        #expect {
            try producer.send(topic: "mock-topic", key: nil, value: [UInt8](repeating: 7, count: 10_000))
        } throws: { error in
            let error = error as! KafkaError
            return error.code == .messageTooLarge && !error.isRetriable && !error.isFatal
                && error.message.contains("mock-topic")
        }
        await producer.close()
    }
}
