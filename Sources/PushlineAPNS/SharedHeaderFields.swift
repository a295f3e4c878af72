import PushlineAPNSCore
import PushlineHTTP2

/// A connection's constant fields for the regular headers a batch's requests share: those before
/// `apns-id` (push type, topic, priority) and those after it (expiration, collapse id), laid out
/// once and remade only when a batch asks for other values. A request's header block then
/// references them (`HTTP2HeaderBlock.append(_:)`) and the encoder writes their remembered bytes
/// by key: no string copied, compared or formatted per request.
///
/// The fields and their indexing come from `APNSRequestHeaders.forEachRegularHeader`, Apple's
/// rule in one place: the fields after the id are indexed incrementally on a connection's first
/// request and never afterwards, so they are kept per `firstOnConnection`.
///
/// Owned by one connection, on its event loop.
struct SharedHeaderFields {
    private struct Leading {
        var pushType: APNSPushType
        var topic: String
        var priority: APNSPriority
        var fields: HTTP2ConstantFields
    }

    private struct Trailing {
        var expiration: Int64?
        var collapseID: String?
        var firstOnConnection: Bool
        /// Whether the id itself is never indexed (it follows the rule of the fields after it).
        var idNeverIndexed: Bool
        /// nil: the batch has neither.
        var fields: HTTP2ConstantFields?
    }

    private var leading: Leading?
    private var trailing: Trailing?
    /// The batch the fields were last asked for, and whether for a connection's first request:
    /// the next request of the same batch (the usual case) gets them without a look at its
    /// values. Held, so its identity is not reused meanwhile.
    private var lastBatch: RequestBatch?
    private var lastFirstOnConnection = false

    init() {}

    /// What a request of a batch shares with the others: the fields before its id, the id's
    /// indexing, and the fields after it (nil when none).
    struct Fields {
        var leading: HTTP2ConstantFields
        var idNeverIndexed: Bool
        var trailing: HTTP2ConstantFields?
    }

    /// The fields of a shared batch's requests around their ids.
    mutating func fields(of batch: RequestBatch, firstOnConnection: Bool) -> Fields {
        if batch === lastBatch, firstOnConnection == lastFirstOnConnection, let leading, let trailing {
            return Fields(leading: leading.fields, idNeverIndexed: trailing.idNeverIndexed, trailing: trailing.fields)
        }
        lastBatch = batch
        lastFirstOnConnection = firstOnConnection
        return fields(of: batch.prototype!, firstOnConnection: firstOnConnection)
    }

    /// The fields of `prototype` (a device notification) around its id.
    private mutating func fields(of prototype: APNSNotification, firstOnConnection: Bool) -> Fields {
        if let leading, let trailing, leading.pushType == prototype.pushType, leading.priority == prototype.priority,
            leading.topic == prototype.topic, trailing.firstOnConnection == firstOnConnection,
            trailing.expiration == prototype.expiration, trailing.collapseID == prototype.collapseID
        {
            return Fields(leading: leading.fields, idNeverIndexed: trailing.idNeverIndexed, trailing: trailing.fields)
        }
        var before: [(name: String, value: String, neverIndex: Bool)] = []
        var after: [(name: String, value: String, neverIndex: Bool)] = []
        var seenID = false
        var idNeverIndexed = true
        APNSRequestHeaders.forEachRegularHeader(of: prototype, authorization: nil, firstOnConnection: firstOnConnection) {
            name,
            value,
            indexing in
            if name == APNSRequestHeaders.deviceIDHeader {
                seenID = true
                idNeverIndexed = indexing == .never
            } else if seenID {
                after.append((name, value, indexing == .never))
            } else {
                before.append((name, value, indexing == .never))
            }
        }
        precondition(seenID, "a shared batch's prototype is a device notification")
        if leading?.pushType != prototype.pushType || leading?.priority != prototype.priority || leading?.topic != prototype.topic {
            leading = Leading(
                pushType: prototype.pushType,
                topic: prototype.topic,
                priority: prototype.priority,
                fields: HTTP2ConstantFields(before)
            )
        }
        if trailing?.firstOnConnection != firstOnConnection || trailing?.expiration != prototype.expiration
            || trailing?.collapseID != prototype.collapseID
        {
            trailing = Trailing(
                expiration: prototype.expiration,
                collapseID: prototype.collapseID,
                firstOnConnection: firstOnConnection,
                idNeverIndexed: idNeverIndexed,
                fields: after.isEmpty ? nil : HTTP2ConstantFields(after)
            )
        }
        return Fields(leading: leading!.fields, idNeverIndexed: idNeverIndexed, trailing: trailing!.fields)
    }
}
