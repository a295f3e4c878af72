/// Builds the header list of an APNs request, with the HPACK flags APNs asks for.
///
/// APNs keeps a small dynamic table, so: `:path` and `authorization` are literals never indexed;
/// `apns-id`, `apns-expiration` and `apns-collapse-id` use incremental indexing on the first request
/// of a connection and no indexing afterwards; everything else is never indexed. The pseudo-headers
/// `:method`, `:scheme` come from the static table either way. No PRIORITY information is sent.
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
        let idIndexing: APNSHeaderField.Indexing = firstOnConnection ? .incremental : .never
        var fields: [APNSHeaderField] = []
        fields.reserveCapacity(11)
        fields.append(APNSHeaderField(":method", "POST", indexing: .incremental))
        fields.append(APNSHeaderField(":scheme", "https", indexing: .incremental))
        fields.append(APNSHeaderField(":authority", authority, indexing: .never))
        fields.append(APNSHeaderField(":path", notification.path, indexing: .never))
        if let bearerToken {
            fields.append(APNSHeaderField("authorization", "bearer " + bearerToken, indexing: .never))
        }
        fields.append(APNSHeaderField("apns-push-type", notification.pushType.rawValue, indexing: .never))
        fields.append(APNSHeaderField("apns-topic", notification.topic, indexing: .never))
        fields.append(APNSHeaderField("apns-priority", notification.priority.headerValue, indexing: .never))
        fields.append(APNSHeaderField("apns-id", notification.apnsID, indexing: idIndexing))
        if let expiration = notification.expiration {
            fields.append(APNSHeaderField("apns-expiration", String(expiration), indexing: idIndexing))
        }
        if let collapseID = notification.collapseID {
            fields.append(APNSHeaderField("apns-collapse-id", collapseID, indexing: idIndexing))
        }
        return fields
    }
}
