import PushlineKafka
import Testing

@testable import PushlineWorker

/// The consumer's reader of job records: a valid job is carried as its box and decodes as the
/// pipeline would have decoded its bytes; anything the pipeline would reject is declined, so
/// its record keeps the bytes and headers its dead-letter copy needs.
@Suite struct JobRecordReaderTests {
    let decoder = JobDecoder(bundleIDs: ["default": "com.example.app"], maxRecordBytes: 300)
    let token = String(repeating: "ab", count: 32)

    func read(_ text: String) -> (any AnyObject & Sendable)? {
        Array(text.utf8).withUnsafeBytes { JobRecordReader(decoder: decoder).read(key: nil, value: $0) }
    }

    @Test func aValidJobIsReadAsTheJobItsBytesDecodeTo() throws {
        let text = #"{"id":"j1","token":"\#(token)","payload":{"aps":{"alert":"hi"}},"meta":{"c":1}}"#
        let reading = try #require(read(text))
        let box = try #require(reading as? Job.Box)
        #expect(Job(box: box) == (try decoder.decode(Array(text.utf8)).get()))
    }

    @Test func whatThePipelineWouldRejectIsDeclined() {
        let oversized = #"{"id":"big","token":"\#(token)","payload":{"a":"\#(String(repeating: "x", count: 300))"}}"#
        for text in ["{", "[1]", #"{"token":"\#(token)","payload":{}}"#, #"{"id":"a","token":"zz","payload":{}}"#, oversized] {
            guard case .failure = decoder.decode(Array(text.utf8)) else {
                Issue.record("expected the decoder to reject \(text.prefix(40))")
                continue
            }
            #expect(read(text) == nil, "\(text.prefix(40))")
        }
    }

    @Test func aRecordCarryingAReadJobDecodesToThatJobWithoutItsBytes() throws {
        let text = #"{"id":"j2","token":"\#(token)","payload":{}}"#
        let reading = try #require(read(text))
        let record = KafkaRecord(
            id: RecordID(topic: "jobs", partition: 0, offset: 7, generation: 1),
            key: nil,
            value: [],
            headers: [],
            timestampMilliseconds: 1
        )
        var carrying = record
        carrying.reading = reading
        #expect(carrying != record)
        let decoded = try JobPipeline.decode(carrying, with: decoder).job.get()
        #expect(decoded.id == "j2" && decoded.tokens == [token])
        // Without a reading, the (empty) bytes are decoded: a rejection.
        #expect((try? JobPipeline.decode(record, with: decoder).job.get()) == nil)
    }
}
