/// HPACK's static table (RFC 7541, Appendix A): entry `i` has index `i + 1` on the wire.
enum HPACKStaticTable {
    static let entries: [(name: StaticString, value: StaticString)] = [
        (":authority", ""),
        (":method", "GET"),
        (":method", "POST"),
        (":path", "/"),
        (":path", "/index.html"),
        (":scheme", "http"),
        (":scheme", "https"),
        (":status", "200"),
        (":status", "204"),
        (":status", "206"),
        (":status", "304"),
        (":status", "400"),
        (":status", "404"),
        (":status", "500"),
        ("accept-charset", ""),
        ("accept-encoding", "gzip, deflate"),
        ("accept-language", ""),
        ("accept-ranges", ""),
        ("accept", ""),
        ("access-control-allow-origin", ""),
        ("age", ""),
        ("allow", ""),
        ("authorization", ""),
        ("cache-control", ""),
        ("content-disposition", ""),
        ("content-encoding", ""),
        ("content-language", ""),
        ("content-length", ""),
        ("content-location", ""),
        ("content-range", ""),
        ("content-type", ""),
        ("cookie", ""),
        ("date", ""),
        ("etag", ""),
        ("expect", ""),
        ("expires", ""),
        ("from", ""),
        ("host", ""),
        ("if-match", ""),
        ("if-modified-since", ""),
        ("if-none-match", ""),
        ("if-range", ""),
        ("if-unmodified-since", ""),
        ("last-modified", ""),
        ("link", ""),
        ("location", ""),
        ("max-forwards", ""),
        ("proxy-authenticate", ""),
        ("proxy-authorization", ""),
        ("range", ""),
        ("referer", ""),
        ("refresh", ""),
        ("retry-after", ""),
        ("server", ""),
        ("set-cookie", ""),
        ("strict-transport-security", ""),
        ("transfer-encoding", ""),
        ("user-agent", ""),
        ("vary", ""),
        ("via", ""),
        ("www-authenticate", ""),
    ]

    /// Whole-entry lookup is rare (only fields that may be indexed); names are compared first.
    /// Returns the wire index of the first entry with `name`, and of one with `name` and `value`.
    static func find(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?) -> (nameIndex: Int?, exactIndex: Int?) {
        var nameIndex: Int?
        for (offset, entry) in entries.enumerated() where name.hasSameBytes(as: entry.name) {
            if nameIndex == nil { nameIndex = offset + 1 }
            if let value, value.hasSameBytes(as: entry.value) { return (nameIndex, offset + 1) }
        }
        return (nameIndex, nil)
    }
}
