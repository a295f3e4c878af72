import PushlineAPNSCore
import PushlineHTTP2

/// Writes a connection's requests into its HTTP/2 session: each request's header block straight
/// from the immutable batch, in Apple's HPACK discipline (`APNSRequestHeaders`), with the fields
/// every request shares laid out once as constant fields (referenced, not copied: the encoder
/// writes their remembered bytes by key).
///
/// A value owned by one connection, on its event loop.
struct RequestWriter {
    /// `:method`, `:scheme` and `:authority`, the same on every request.
    private let pseudoHeaders: HTTP2ConstantFields
    /// The current provider token's `authorization` field and its generation: remade once per
    /// token rotation.
    private var authorizationField: (generation: UInt16, authorization: String, fields: HTTP2ConstantFields)?
    /// The regular fields shared batches' requests share (push type, topic, priority, expiration,
    /// collapse id): remade only when a batch asks for other values.
    private var sharedFields = SharedHeaderFields()
    /// The HTTP/2 handler the last requests went to: the next request is the first on its
    /// connection unless it goes to the same one. Weak: a handler gone is never taken for another.
    private weak var lastHandler: HTTP2ClientHandler?

    init(authority: String) {
        // Apple's rule: `:authority` never indexed (APNSRequestHeaders).
        pseudoHeaders = HTTP2ConstantFields([
            (":method", "POST", false), (":scheme", "https", false), (":authority", authority, true),
        ])
    }

    /// The `authorization` field of `bearer`, made once per token.
    mutating func authorization(_ bearer: ProviderTokenSource.Bearer) -> HTTP2ConstantFields {
        // The generation decides; the token's text (usually the same storage: a pointer compare)
        // makes sure a wrapped generation can never bring back another token's field.
        if let current = authorizationField, current.generation == bearer.generation, current.authorization == bearer.authorization {
            return current.fields
        }
        // Never indexed (Apple's rule for the provider token).
        let fields = HTTP2ConstantFields([("authorization", bearer.authorization, true)])
        authorizationField = (bearer.generation, bearer.authorization, fields)
        return fields
    }

    /// Whether requests about to go to `handler` are the first on its connection (Apple's
    /// indexing rule differs for those): asked once per run of requests, then `submit` them.
    mutating func isFirstRequest(on handler: HTTP2ClientHandler) -> Bool {
        defer { lastHandler = handler }
        return handler !== lastHandler
    }

    /// Submits `request` on `handler`; returns its stream id. `sent` is the tag's value (send time
    /// and token generation, `StreamTagging`).
    mutating func submit(
        _ request: OutgoingRequest,
        sent: UInt64,
        authorization: HTTP2ConstantFields?,
        firstOnConnection: Bool,
        to handler: HTTP2ClientHandler
    ) throws(HTTP2StreamError) -> Int32 {
        let batch = request.batch
        let index = request.index
        let tag = HTTP2StreamTag(object: batch, id: StreamTagging.id(request.id, index: index), value: sent)
        // A notification given alone: its own path and id (a shared batch's come from its bytes).
        let notification = batch.isShared ? nil : batch.notifications[index]
        let regular = sharedFields.fields(ofRequest: index, in: batch, notification: notification, firstOnConnection: firstOnConnection)
        let pseudoHeaders = pseudoHeaders
        // The fields go straight from the immutable batch into the session's header block: no
        // header array, no request value, no copy of the notification.
        return try handler.submit(tag: tag, body: batch.body(at: index)) { block in
            Self.writeHeaders(
                of: batch,
                index: index,
                notification: notification,
                pseudoHeaders: pseudoHeaders,
                authorization: authorization,
                regular: regular,
                into: &block
            )
        }
    }

    /// Request `index`'s header block, in Apple's HPACK discipline (`APNSRequestHeaders`): the
    /// pseudo-headers (`:authority` and `:path` never indexed), the `authorization` field, the
    /// regular fields before the id, the id, and those after it. Only `:path`, the id and, in a
    /// batch that gives each request's, the collapse id are the request's own (for a shared
    /// batch, from its bytes: no string for the first two); every other field is a constant
    /// field (`regular`, `SharedHeaderFields`), referenced rather than copied.
    static func writeHeaders(
        of batch: RequestBatch,
        index: Int,
        notification: APNSNotification?,
        pseudoHeaders: HTTP2ConstantFields,
        authorization: HTTP2ConstantFields?,
        regular: SharedHeaderFields.Fields,
        into block: inout HTTP2HeaderBlock
    ) {
        block.append(pseudoHeaders)
        if let notification {
            let (pathPrefix, pathRest) = notification.destination.pathParts
            block.append(":path", pathPrefix, valueSuffix: pathRest, neverIndex: true)
        } else {
            batch.tokens.withToken(at: index) { token in
                block.append(":path", valuePrefix: APNSDestination.devicePathPrefix, valueBytes: token, neverIndex: true)
            }
        }
        if let authorization { block.append(authorization) }
        block.append(regular.leading)
        if let notification {
            block.append(regular.idName, notification.apnsID, neverIndex: regular.idNeverIndexed)
        } else {
            batch.ids!.withID(at: index) { id in
                block.append(regular.idName, valueBytes: id, neverIndex: regular.idNeverIndexed)
            }
        }
        if let trailing = regular.trailing { block.append(trailing) }
        // A request's own collapse id (a run of single-token jobs whose collapse ids differ): the
        // last field, as the rule orders it, indexed as the id is (`APNSRequestHeaders`).
        if let collapseID = batch.ownCollapseID(at: index) {
            block.append("apns-collapse-id", collapseID, neverIndex: regular.idNeverIndexed)
        }
    }
}
