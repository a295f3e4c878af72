/// What a job started in a worker with several apps keeps in case it must be parked
/// (`JobParker`): its record's bytes as its sender wrote them, and, for a job brought back from
/// the deferred topic, where it was first read. One object, made only where a job may be parked,
/// so that a single-token job in a group costs one optional reference for it (nil with one app).
final class ParkingCopy: Sendable {
    let bytes: [UInt8]
    /// Where the job was first read, when that was not its record (a parked job read back).
    let firstSource: RecordSource?

    init(bytes: [UInt8], firstSource: RecordSource?) {
        self.bytes = bytes
        self.firstSource = firstSource
    }
}
