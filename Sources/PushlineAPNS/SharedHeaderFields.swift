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
    /// The values the fields before the id are made of.
    private struct LeadingValues: Equatable {
        var pushType: APNSPushType
        var topic: String
        var priority: APNSPriority
    }

    /// The values the fields after the id (and the id's indexing) are made of.
    private struct TrailingValues: Equatable {
        var expiration: Int64?
        var collapseID: String?
        var firstOnConnection: Bool
    }

    private var leading: (values: LeadingValues, fields: HTTP2ConstantFields)?
    /// `fields` nil: the batch has neither field. `idNeverIndexed`: the id follows the rule of
    /// the fields after it.
    private var trailing: (values: TrailingValues, idNeverIndexed: Bool, fields: HTTP2ConstantFields?)?
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
        if batch !== lastBatch || firstOnConnection != lastFirstOnConnection || leading == nil || trailing == nil {
            lastBatch = batch
            lastFirstOnConnection = firstOnConnection
            update(for: batch.prototype!, firstOnConnection: firstOnConnection)
        }
        return Fields(leading: leading!.fields, idNeverIndexed: trailing!.idNeverIndexed, trailing: trailing!.fields)
    }

    /// Remakes the group whose values `prototype` (a device notification) changes, if any.
    private mutating func update(for prototype: APNSNotification, firstOnConnection: Bool) {
        let leadingValues = LeadingValues(pushType: prototype.pushType, topic: prototype.topic, priority: prototype.priority)
        let trailingValues = TrailingValues(
            expiration: prototype.expiration,
            collapseID: prototype.collapseID,
            firstOnConnection: firstOnConnection
        )
        guard leading?.values != leadingValues || trailing?.values != trailingValues else { return }
        var before: [(name: String, value: String, neverIndex: Bool)] = []
        var after: [(name: String, value: String, neverIndex: Bool)] = []
        var idNeverIndexed: Bool?
        APNSRequestHeaders.forEachRegularHeader(of: prototype, authorization: nil, firstOnConnection: firstOnConnection) {
            name,
            value,
            indexing in
            if name == APNSRequestHeaders.deviceIDHeader {
                idNeverIndexed = indexing == .never
            } else if idNeverIndexed == nil {
                before.append((name, value, indexing == .never))
            } else {
                after.append((name, value, indexing == .never))
            }
        }
        guard let idNeverIndexed else { preconditionFailure("a shared batch's prototype is a device notification") }
        // A group whose values stay keeps its fields (and their keys, which the encoder knows).
        if leading?.values != leadingValues {
            leading = (leadingValues, HTTP2ConstantFields(before))
        }
        if trailing?.values != trailingValues {
            trailing = (trailingValues, idNeverIndexed, after.isEmpty ? nil : HTTP2ConstantFields(after))
        }
    }
}
