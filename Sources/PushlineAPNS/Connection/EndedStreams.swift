import PushlineAPNSCore
import PushlineHTTP2

/// The streams a connection saw end since its last report, as values for the pool
/// (`StreamEnded`), built from the HTTP/2 handler's completions; and the metrics of their
/// answers, counted in place and recorded when the batch is taken.
///
/// A value owned by one connection, on its event loop.
struct EndedStreams {
    private var ended: [StreamEnded] = []
    /// When the answers of the batch arrived: read once, at the batch's first answer (its
    /// answers are handled one after another within microseconds), and let go when the batch is
    /// taken.
    private var answeredAt: MonotonicInstant?
    /// Plain 200s of the batch, recorded as one count.
    private var answeredOK = 0
    /// Every answer's latency.
    private let latencies = TimerTally()
    private let metrics: APNSMetrics

    init(metrics: APNSMetrics) {
        self.metrics = metrics
    }

    var isEmpty: Bool { ended.isEmpty }

    /// A request that did not go out (or whose stream ended without the handler's word).
    mutating func append(_ end: StreamEnded) {
        ended.append(end)
    }

    /// A stream submitted with `tag` ended with `result`.
    mutating func completed(_ tag: HTTP2StreamTag, result: Result<HTTP2Response, HTTP2StreamError>) {
        let id = StreamTagging.requestID(tag.id)
        let sentAt = StreamTagging.sentAt(tag.value)
        let generation = StreamTagging.tokenGeneration(tag.value)
        switch result {
        case .success(let http2Response):
            var body: [UInt8] = []
            if let buffer = http2Response.body { body = Array(buffer.readableBytesView) }
            let response = APNSResponse(
                status: http2Response.status,
                apnsID: Self.answeredID(http2Response.headers, tag: tag),
                apnsUniqueID: http2Response.headers.first(named: "apns-unique-id"),
                body: body
            )
            let answeredAt = answeredAt ?? MonotonicInstant.now
            self.answeredAt = answeredAt
            latencies.record(answeredAt.nanoseconds(since: sentAt), in: metrics.latency)
            if response.status == 200 && response.reason == nil {
                answeredOK += 1
            } else {
                metrics.otherResponse(status: response.status, reason: response.reason?.rawValue)
            }
            ended.append(StreamEnded(id: id, sentAt: sentAt, tokenGeneration: generation, end: .response(response)))
        case .failure(let error):
            let end: StreamEnd
            switch error.kind {
            case .cancelled:
                // Only the deadline sweep cancels streams.
                end = .timedOut
            case .reset(.protocolError):
                end = .malformed
            case .connectionError:
                end = .connectionError
            default:
                end = error.isUnprocessed ? .unprocessed : .lost
            }
            ended.append(StreamEnded(id: id, sentAt: sentAt, tokenGeneration: generation, end: end))
        }
    }

    /// Records the batch's answers in the metrics, and takes the streams that ended (nil when
    /// none did). Give the array back (`recycle`) once the pool has read it.
    mutating func take() -> [StreamEnded]? {
        answeredAt = nil
        if answeredOK > 0 {
            metrics.okResponses(answeredOK)
            answeredOK = 0
        }
        latencies.flush()
        guard !ended.isEmpty else { return nil }
        var batch: [StreamEnded] = []
        swap(&batch, &ended)
        return batch
    }

    /// A taken batch the pool has read (and kept nothing of): its storage holds the next batch,
    /// unless streams ended meanwhile.
    mutating func recycle(_ batch: inout [StreamEnded]) {
        batch.removeAll(keepingCapacity: true)
        if ended.isEmpty { swap(&batch, &ended) }
    }

    /// The id an answer carries, without a new string when it is the request's own: a device
    /// push's `apns-id` (for a notification given alone, the request's own string; for a shared
    /// batch, nil when it echoes the request's id: `APNSClient.send(_:options:completion:)`), or
    /// a broadcast's `apns-request-id`.
    private static func answeredID(_ headers: HTTP2ResponseHeaders, tag: HTTP2StreamTag) -> String? {
        // A checked cast: `unsafeDowncast` saved 0.5% of the worker's CPU at 100 tokens per job
        // (docs/architecture.md, "Unsafe constructs on the hot path"), under the 1% a construct
        // must save to stay.
        guard let object = tag.object, let batch = object as? RequestBatch else {
            return headers.first(named: APNSRequestHeaders.deviceIDHeader)
        }
        let index = StreamTagging.index(tag.id)
        guard let ids = batch.ids else {
            return headers.first(named: APNSRequestHeaders.deviceIDHeader, reusing: batch.notifications[index].apnsID)
                ?? headers.first(named: "apns-request-id")
        }
        let comparison = ids.withID(at: index) {
            headers.compare(named: APNSRequestHeaders.deviceIDHeader, with: $0)
        }
        switch comparison {
        case .equal, .absent: return nil
        case .different(let other): return other
        }
    }
}
