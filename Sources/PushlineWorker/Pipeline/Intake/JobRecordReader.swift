import PushlineKafka

/// Decodes job records on the consumer's poll thread, in librdkafka's fetch buffer: a valid job
/// is carried to the pipeline as its `Job.Box`, and the record's bytes and headers are never
/// copied. A record that does not decode is declined, so it keeps its bytes and headers for its
/// dead-letter copy, and the pipeline decodes it again for the rejection (rare, and pure).
///
/// With `keepsBytes` (a worker with several apps, where a job may be parked), a valid job keeps
/// its record's bytes too (`KeptJobRecord`): one copy of the value per record, and no headers.
final class JobRecordReader: KafkaRecordReader {
    let decoder: JobDecoder
    let keepsBytes: Bool

    init(decoder: JobDecoder, keepsBytes: Bool = false) {
        self.decoder = decoder
        self.keepsBytes = keepsBytes
    }

    func read(key: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer) -> (any AnyObject & Sendable)? {
        guard case .success(let job) = decoder.decode(value) else { return nil }
        guard keepsBytes else { return job.box }
        return KeptJobRecord(job: job.box, bytes: Array(value))
    }
}
