import PushlineKafka
import PushlineTestSupport
import Testing

/// A consumer's `KafkaRecordReader` against the real embedded broker: what it reads comes without
/// the record's bytes, what it declines comes as without a reader.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ConsumerReaderIntegrationTests {
    /// What the reader below read: the record's index, from its value, and its key's.
    final class Read: Sendable {
        let value: Int
        let key: Int?

        init(value: Int, key: Int?) {
            self.value = value
            self.key = key
        }
    }

    /// Reads the records whose value is an even index; declines the odd ones.
    final class EvenReader: KafkaRecordReader {
        func read(key: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer) -> (any AnyObject & Sendable)? {
            guard let index = Int(String(decoding: value, as: UTF8.self)), index % 2 == 0 else { return nil }
            return Read(value: index, key: key.flatMap { Int(String(decoding: $0, as: UTF8.self)) })
        }
    }

    @Test func readRecordsComeWithoutBytesAndDeclinedOnesWithAllOfThem() async throws {
        let broker = try await EmbeddedBroker()
        defer { broker.stop() }
        let topic = "jobs-reader"
        try await broker.createTopic(topic, partitions: 2)
        _ = try await Integration.produce(broker, topic: topic, count: 400)
        let configuration = Integration.consumerConfiguration(broker, group: "g-reader", topic: topic)
        let probe = try ConsumerProbe(configuration, seed: 41, reader: EvenReader())
        try await waitUntil("the member sees all 400 records", timeout: .seconds(60)) { probe.recordCount >= 400 }
        let records = probe.seen.withLock { $0.records }
        #expect(records.count == 400)
        var indices: Set<Int> = []
        for record in records {
            if let read = record.reading {
                let read = try #require(read as? Read)
                // Read in librdkafka's buffer: the key was there for the reader, and nothing was copied.
                #expect(read.value % 2 == 0 && read.key == read.value)
                #expect(record.key == nil && record.value.isEmpty && record.headers.isEmpty)
                indices.insert(read.value)
            } else {
                // Declined: key, value and header as produced (each the index).
                let index = try #require(Int(String(decoding: record.value, as: UTF8.self)))
                #expect(index % 2 == 1)
                #expect(record.key == record.value && record.headers == [KafkaHeader(key: "index", value: record.value)])
                indices.insert(index)
            }
            #expect(record.timestampMilliseconds != nil)
        }
        #expect(indices == Set(0..<400))
        try await probe.close()
    }
}
