/// One HTTP/2 header field as sent or received, with its HPACK indexing choice.
///
/// `neverIndex` maps to nghttp2's `NGHTTP2_NV_FLAG_NO_INDEX`: the field is encoded as a literal
/// "never indexed" so neither side's dynamic table keeps it (APNs wants this for `:path`,
/// `authorization` and most `apns-*` headers). On receipt it reports how the peer encoded the field.
/// Names are sent lowercased (HTTP/2 forbids uppercase names).
public struct HTTP2Header: Sendable, Hashable {
    public var name: String
    public var value: String
    public var neverIndex: Bool

    public init(_ name: String, _ value: String, neverIndex: Bool = false) {
        self.name = name
        self.value = value
        self.neverIndex = neverIndex
    }
}

extension Array where Element == HTTP2Header {
    /// The value of the first header named `name` (names compare exactly; received names are lowercase).
    public func first(named name: String) -> String? {
        for header in self where header.name == name { return header.value }
        return nil
    }
}
