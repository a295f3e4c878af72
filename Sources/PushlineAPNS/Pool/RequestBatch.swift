import NIOCore
import PushlineAPNSCore
import PushlineHTTP2

/// The notifications of one `APNSClient.send` call (a job's tokens, or a run of single-token jobs
/// alike), as one immutable, `Sendable` allocation: its requests are addressed as (batch,
/// index), and share one payload buffer when their payloads are equal (the usual case: one job,
/// one payload).
///
/// Nothing here changes after `init`: what changes while a request lives (attempts, times, holds)
/// is the pool machine's (`RequestState`), never the connection's.
final class RequestBatch: Sendable {
    /// Notifications given one by one (empty for a shared batch).
    let notifications: [APNSNotification]
    /// For a batch that shares everything but tokens and ids (`APNSNotificationBatch`): its
    /// tokens and ids, and its shared part as a notification (`APNSNotificationBatch.prototype`)
    /// for the header rules; nil ids and prototype for notifications given one by one. Stored
    /// apart, read in place: a request copies none of the batch's other fields.
    let tokens: APNSDeviceTokens
    let ids: APNSIDBlock?
    let prototype: APNSNotification?
    let count: Int
    /// The one payload of every request when it is shared; nil when the notifications' own
    /// payloads differ (each request then sends its notification's). Sent in place: no request
    /// copies a payload before nghttp2 reads it into a DATA frame.
    private let sharedBody: [UInt8]?
    /// Request `i`'s payload, for a shared batch whose payloads differ
    /// (`APNSNotificationBatch.payloads`); nil otherwise.
    private let payloads: [[UInt8]]?
    /// Request `i`'s payload's range (less `bufferOffset`: in `bufferBody`), for a batch whose payloads are in one buffer
    /// (`APNSNotificationBatch.payloadBuffer`); nil otherwise.
    private let bufferPayloads: APNSPayloadBuffer?
    /// The payloads' bytes, copied once into a buffer each request's body is a slice of (no
    /// allocation per request).
    private let bufferBody: ByteBuffer?
    /// Where `bufferBody` starts in the bytes `bufferPayloads`' ranges address.
    private let bufferOffset: Int
    /// Request `i`'s `apns-collapse-id`, for a shared batch whose collapse ids differ
    /// (`APNSNotificationBatch.collapseIDs`; the prototype then has none); nil otherwise.
    private let collapseIDs: [String?]?
    let options: APNSSendOptions
    let created: MonotonicInstant
    /// Hears each request's final outcome, once per index.
    let completion: Completion

    /// Who hears the outcomes: a closure, or an object the caller already has.
    enum Completion: Sendable {
        case closure(@Sendable (Int, APNSOutcome) -> Void)
        /// The observer hears request `i` as `firstIndex + i`.
        case observer(any APNSBatchObserver, firstIndex: Int)
    }

    init(
        notifications: [APNSNotification],
        options: APNSSendOptions,
        created: MonotonicInstant,
        completion: Completion
    ) {
        self.notifications = notifications
        tokens = APNSDeviceTokens()
        ids = nil
        prototype = nil
        count = notifications.count
        self.options = options
        self.created = created
        self.completion = completion
        payloads = nil
        bufferPayloads = nil
        bufferBody = nil
        bufferOffset = 0
        collapseIDs = nil
        if let first = notifications.first, notifications.allSatisfy({ $0.payload == first.payload }) {
            sharedBody = first.payload
        } else {
            sharedBody = nil
        }
    }

    init(
        batch: APNSNotificationBatch,
        options: APNSSendOptions,
        created: MonotonicInstant,
        completion: Completion
    ) {
        notifications = []
        tokens = batch.tokens
        ids = batch.ids
        prototype = batch.prototype
        count = batch.count
        precondition(batch.payloads.map { $0.count == batch.count } ?? true, "a payload per token, or one for all")
        payloads = batch.payloads
        precondition(batch.payloadBuffer.map { $0.count == batch.count } ?? true, "a payload per token in the buffer")
        precondition(batch.payloads == nil || batch.payloadBuffer == nil, "payloads and payloadBuffer both set")
        // The ranges alone: the bytes are in `bufferBody`, and the array goes with the batch.
        bufferPayloads = batch.payloadBuffer?.rangesOnly
        bufferBody = batch.payloadBuffer.map { buffer in
            buffer.bytes.withUnsafeBytes { ByteBuffer(bytes: UnsafeRawBufferPointer(rebasing: $0[buffer.span])) }
        }
        bufferOffset = batch.payloadBuffer?.span.lowerBound ?? 0
        sharedBody = batch.payloads == nil && batch.payloadBuffer == nil ? batch.payload : nil
        precondition(batch.collapseIDs.map { $0.count == batch.count } ?? true, "a collapse id per token, or one for all")
        // Both would send two `apns-collapse-id` fields.
        precondition(batch.collapseIDs == nil || batch.collapseID == nil, "collapseIDs and collapseID both set")
        collapseIDs = batch.collapseIDs
        self.options = options
        self.created = created
        self.completion = completion
    }

    /// Whether the requests share everything but tokens and ids (`APNSNotificationBatch`).
    var isShared: Bool { ids != nil }

    /// The request body of notification `index`.
    func body(at index: Int) -> HTTP2RequestBody {
        if let sharedBody { return .bytes(sharedBody) }
        if let payloads { return .bytes(payloads[index]) }
        if let bufferPayloads, let bufferBody {
            let range = bufferPayloads.range(at: index)
            return .buffer(bufferBody.getSlice(at: range.lowerBound - bufferOffset, length: range.count)!)
        }
        return .bytes(notifications[index].payload)
    }

    /// Request `index`'s own `apns-collapse-id`, written after the shared fields, when the batch
    /// gives each request's (`APNSNotificationBatch.collapseIDs`); nil otherwise (a shared
    /// batch's one collapse id is among its shared fields, a lone notification's in its own).
    func ownCollapseID(at index: Int) -> String? {
        guard let collapseIDs else { return nil }
        return collapseIDs[index]
    }

    /// Tells whoever hears the batch that request `index` ended with `outcome`.
    func ended(_ index: Int, outcome: APNSOutcome) {
        switch completion {
        case .closure(let completion): completion(index, outcome)
        case .observer(let observer, let firstIndex): observer.notificationEnded(firstIndex + index, outcome: outcome)
        }
    }
}
