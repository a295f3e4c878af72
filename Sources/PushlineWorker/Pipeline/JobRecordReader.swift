import PushlineKafka

/// Decodes job records on the consumer's poll thread, in librdkafka's fetch buffer: a valid job
/// is carried to the pipeline as its `Job.Box`, and the record's bytes and headers are never
/// copied. A record that does not decode is declined, so it keeps its bytes and headers for its
/// dead-letter copy, and the pipeline decodes it again for the rejection (rare, and pure).
final class JobRecordReader: KafkaRecordReader {
    let decoder: JobDecoder

    init(decoder: JobDecoder) {
        self.decoder = decoder
    }

    func read(key: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer) -> (any AnyObject & Sendable)? {
        guard case .success(let job) = decoder.decode(value) else { return nil }
        return job.box
    }
}
