import PushlineAPNSCore
import PushlineHTTP2

/// A connection's constant fields for the regular headers around a request's id: those before it
/// (push type, then topic or channel, priority) and those after it (expiration, collapse id),
/// laid out once and remade only when a request asks for other values. Every request's header
/// block is written this way: a shared batch's requests ask for their prototype's fields, a
/// notification given alone for its own (the same values as the last request's, usually). A request's header block then
/// references them (`HTTP2HeaderBlock.append(_:)`) and the encoder writes their remembered bytes
/// by key: no string copied, compared or formatted per request.
///
/// The fields and their indexing come from `APNSRequestHeaders.forEachRegularHeader`, Apple's
/// rule in one place: the fields after the id are indexed incrementally on a connection's first
/// request and never afterwards, so they are kept per `firstOnConnection`.
///
/// Owned by one connection, on its event loop.
struct SharedHeaderFields {
    /// The values the fields before the id are made of.
    private struct LeadingValues: Equatable {
        var pushType: APNSPushType
        var topic: String
        /// A broadcast's channel (its fields name the channel, not the topic), nil for a device.
        var channelID: String?
        var priority: APNSPriority
    }

    /// The values the fields after the id (and the id's indexing) are made of.
    private struct TrailingValues: Equatable {
        var expiration: Int64?
        var collapseID: String?
        var firstOnConnection: Bool
    }

    private var leading: (values: LeadingValues, fields: HTTP2ConstantFields)?
    /// `fields` nil: the request has neither field. `idNeverIndexed`: the id follows the rule of
    /// the fields after it.
    private var trailing: (values: TrailingValues, idNeverIndexed: Bool, fields: HTTP2ConstantFields?)?
    /// The id's header: `apns-id`, or a broadcast's `apns-request-id`.
    private var idName = APNSRequestHeaders.deviceIDHeader
    /// The batch and index the fields were last asked for, and whether for a connection's first
    /// request: the next request of the same shared batch (the usual case) gets them without a
    /// look at its values. Held, so its identity is not reused meanwhile.
    private var lastBatch: RequestBatch?
    private var lastIndex = 0
    private var lastFirstOnConnection = false

    init() {}

    /// What a request shares with others: the fields before its id, the id's header and
    /// indexing, and the fields after it (nil when none).
    struct Fields {
        var leading: HTTP2ConstantFields
        var idName: String
        var idNeverIndexed: Bool
        var trailing: HTTP2ConstantFields?
    }

    /// Request `index` of `batch`'s fields around its id: a notification given alone
    /// (`notification`, nil for a shared batch) has its own, a shared batch's are the batch's.
    mutating func fields(
        ofRequest index: Int,
        in batch: RequestBatch,
        notification: APNSNotification?,
        firstOnConnection: Bool
    ) -> Fields {
        if let notification {
            return fields(of: notification, in: batch, index: index, firstOnConnection: firstOnConnection)
        }
        return fields(of: batch, firstOnConnection: firstOnConnection)
    }

    /// The fields of a shared batch's requests around their ids.
    mutating func fields(of batch: RequestBatch, firstOnConnection: Bool) -> Fields {
        fields(of: batch.prototype!, in: batch, index: 0, firstOnConnection: firstOnConnection)
    }

    /// The fields of `notification` around its id: request `index` of `batch` (index 0 for every
    /// request of a shared batch, whose prototype they share).
    mutating func fields(of notification: APNSNotification, in batch: RequestBatch, index: Int, firstOnConnection: Bool) -> Fields {
        if batch !== lastBatch || index != lastIndex || firstOnConnection != lastFirstOnConnection || leading == nil
            || trailing == nil
        {
            lastBatch = batch
            lastIndex = index
            lastFirstOnConnection = firstOnConnection
            update(for: notification, firstOnConnection: firstOnConnection)
        }
        return Fields(leading: leading!.fields, idName: idName, idNeverIndexed: trailing!.idNeverIndexed, trailing: trailing!.fields)
    }

    /// Remakes the group whose values `prototype` changes, if any.
    private mutating func update(for prototype: APNSNotification, firstOnConnection: Bool) {
        var channelID: String?
        if case .channel(let channel, _) = prototype.destination { channelID = channel }
        let leadingValues = LeadingValues(
            pushType: prototype.pushType,
            topic: prototype.topic,
            channelID: channelID,
            priority: prototype.priority
        )
        let trailingValues = TrailingValues(
            expiration: prototype.expiration,
            collapseID: prototype.collapseID,
            firstOnConnection: firstOnConnection
        )
        guard leading?.values != leadingValues || trailing?.values != trailingValues else { return }
        var before: [(name: String, value: String, neverIndex: Bool)] = []
        var after: [(name: String, value: String, neverIndex: Bool)] = []
        var idNeverIndexed: Bool?
        let idName = channelID == nil ? APNSRequestHeaders.deviceIDHeader : "apns-request-id"
        APNSRequestHeaders.forEachRegularHeader(of: prototype, authorization: nil, firstOnConnection: firstOnConnection) {
            name,
            value,
            indexing in
            if name == idName && idNeverIndexed == nil {
                idNeverIndexed = indexing == .never
            } else if idNeverIndexed == nil {
                before.append((name, value, indexing == .never))
            } else {
                after.append((name, value, indexing == .never))
            }
        }
        guard let idNeverIndexed else { preconditionFailure("every request has an id field (\(idName))") }
        self.idName = idName
        // A group whose values stay keeps its fields (and their keys, which the encoder knows).
        if leading?.values != leadingValues {
            leading = (leadingValues, HTTP2ConstantFields(before))
        }
        if trailing?.values != trailingValues {
            trailing = (trailingValues, idNeverIndexed, after.isEmpty ? nil : HTTP2ConstantFields(after))
        }
    }
}
