/// A job the consumer's reader decoded with its record's bytes kept (`JobRecordReader` in a worker
/// with several apps): a job of an app that parks is copied to the deferred topic as its sender
/// wrote it, whatever fields it has.
final class KeptJobRecord: Sendable {
    let job: Job.Box
    let bytes: [UInt8]

    init(job: Job.Box, bytes: [UInt8]) {
        self.job = job
        self.bytes = bytes
    }
}
