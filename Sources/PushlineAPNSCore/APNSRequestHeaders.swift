/// Builds the header list of an APNs request, with the HPACK flags APNs asks for.
///
/// APNs keeps a small dynamic table, so: `:path` and `authorization` are literals never indexed;
/// `apns-id` (a broadcast's `apns-request-id`), `apns-expiration` and `apns-collapse-id` use
/// incremental indexing on the first request of a connection and no indexing afterwards;
/// everything else is never indexed. The pseudo-headers `:method`, `:scheme` come from the static
/// table either way. No PRIORITY information is sent.
public enum APNSRequestHeaders {
    /// The header list for `notification`.
    ///
    /// - Parameters:
    ///   - authority: the `:authority` (host of the endpoint).
    ///   - bearerToken: the provider JWT for token trust, nil for certificate trust.
    ///   - firstOnConnection: whether this is the connection's first request (indexing rule above).
    public static func make(
        for notification: APNSNotification,
        authority: String,
        bearerToken: String?,
        firstOnConnection: Bool
    ) -> [APNSHeaderField] {
        var fields: [APNSHeaderField] = []
        fields.reserveCapacity(11)
        fields.append(APNSHeaderField(":method", "POST", indexing: .incremental))
        fields.append(APNSHeaderField(":scheme", "https", indexing: .incremental))
        fields.append(APNSHeaderField(":authority", authority, indexing: .never))
        fields.append(APNSHeaderField(":path", notification.path, indexing: .never))
        forEachRegularHeader(
            of: notification,
            authorization: bearerToken.map { "bearer " + $0 },
            firstOnConnection: firstOnConnection
        ) { name, value, indexing in
            fields.append(APNSHeaderField(name, value, indexing: indexing))
        }
        return fields
    }

    /// The header that carries a device notification's id (a broadcast's is `apns-request-id`).
    public static let deviceIDHeader = "apns-id"

    /// The regular (non-pseudo) headers, in order, without building a list: the client's hot
    /// path appends them straight into its HTTP/2 request.
    ///
    /// - Parameter authorization: the whole `authorization` value (`bearer <JWT>`), or nil.
    @inlinable
    public static func forEachRegularHeader(
        of notification: APNSNotification,
        authorization: String?,
        firstOnConnection: Bool,
        _ body: (_ name: String, _ value: String, _ indexing: APNSHeaderField.Indexing) -> Void
    ) {
        let idIndexing: APNSHeaderField.Indexing = firstOnConnection ? .incremental : .never
        if let authorization {
            body("authorization", authorization, .never)
        }
        if case .channel(let channelID, _) = notification.destination {
            // A broadcast: the channel instead of a topic, `apns-request-id` instead of `apns-id`,
            // and an expiration always (Apple requires it; 0 suits both storage policies).
            body("apns-push-type", notification.pushType.rawValue, .never)
            body("apns-channel-id", channelID, .never)
            body("apns-priority", notification.priority.headerValue, .never)
            body("apns-request-id", notification.apnsID, idIndexing)
            body("apns-expiration", String(notification.expiration ?? 0), idIndexing)
            return
        }
        body("apns-push-type", notification.pushType.rawValue, .never)
        body("apns-topic", notification.topic, .never)
        body("apns-priority", notification.priority.headerValue, .never)
        body(deviceIDHeader, notification.apnsID, idIndexing)
        if let expiration = notification.expiration {
            body("apns-expiration", String(expiration), idIndexing)
        }
        if let collapseID = notification.collapseID {
            body("apns-collapse-id", collapseID, idIndexing)
        }
    }
}
