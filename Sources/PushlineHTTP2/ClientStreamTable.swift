/// The streams of one client connection from submit to end, by stream id, and ended ones kept
/// for reuse.
///
/// It holds the one count of streams in flight (`count`): a stream is here from its submit until
/// it ends (answered, failed, cancelled), including while nghttp2 holds its HEADERS back at the
/// peer's limit. nghttp2 publishes no stream count, and its own would differ: it opens a stream
/// only when the HEADERS leave and closes a cancelled one only once its RST_STREAM has left,
/// while a pool counts a stream from its submit and has a cancelled slot back at once.
///
/// Each stream is retained once by the table (`Unmanaged`: retained on `add`, released by
/// `take`/`takeAll`, or by `releaseAll` when the owner goes first), so the lookups of nghttp2's
/// callbacks (six or more per request) cost no reference counting.
struct ClientStreamTable {
    private var open = StreamTable<Unmanaged<ClientStream>>()
    /// Ended streams kept for reuse (`ClientStream.recycle`), at most `maxSpares`.
    private var spares: [ClientStream] = []
    private static let maxSpares = 1024

    /// Streams submitted and not ended.
    var count: Int { open.count }

    /// Streams whose HEADERS were sent and that have not ended (a walk over the table: for
    /// callers off the hot path).
    var sentCount: Int {
        open.entries.reduce(0) { count, entry in count + (Self.headersSent(entry.value) ? 1 : 0) }
    }

    /// The streams whose HEADERS have not been sent (nghttp2 still holds them back).
    var unsentStreamIDs: [Int32] {
        open.entries.compactMap { entry in Self.headersSent(entry.value) ? nil : entry.key }
    }

    private static func headersSent(_ stream: Unmanaged<ClientStream>) -> Bool {
        stream._withUnsafeGuaranteedRef { $0.headersSent }
    }

    /// Adds stream `streamID` for a new request: a spare stream when there is one.
    mutating func add(_ streamID: Int32, completion: ClientStream.Completion, requestBody: HTTP2RequestBody?) {
        let stream: ClientStream
        if let spare = spares.popLast() {
            spare.reuse(completion: completion, requestBody: requestBody)
            stream = spare
        } else {
            stream = ClientStream(completion: completion, requestBody: requestBody)
        }
        open.insert(Unmanaged.passRetained(stream), for: streamID)
    }

    func contains(_ streamID: Int32) -> Bool {
        open[streamID] != nil
    }

    /// Runs `body` with stream `streamID` (nil when there is none), borrowing the table's
    /// reference instead of retaining it.
    func with<R>(_ streamID: Int32, _ body: (ClientStream) -> R) -> R? {
        open[streamID]?._withUnsafeGuaranteedRef(body)
    }

    /// Takes stream `streamID` out, with the table's reference.
    mutating func take(_ streamID: Int32) -> ClientStream? {
        open.removeValue(forKey: streamID)?.takeRetainedValue()
    }

    /// Takes every stream out (the connection ended), with the table's references.
    mutating func takeAll() -> [(streamID: Int32, stream: ClientStream)] {
        let entries = open.entries
        open.removeAll()
        return entries.map { ($0.key, $0.value.takeRetainedValue()) }
    }

    /// Keeps a taken stream whose completion has been taken, for a later request. Nothing looks
    /// a stream up but by its id, which is gone from the table by then.
    mutating func recycle(_ stream: ClientStream) {
        guard spares.count < Self.maxSpares else { return }
        stream.recycle()
        spares.append(stream)
    }

    /// Lets go of the table's references without taking the streams (their owner is going).
    func releaseAll() {
        for (_, stream) in open.entries { stream.release() }
    }
}
