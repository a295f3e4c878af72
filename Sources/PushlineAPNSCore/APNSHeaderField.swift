/// One request header with its HPACK indexing choice.
public struct APNSHeaderField: Sendable, Hashable {
    /// How the header may enter the HPACK dynamic table.
    public enum Indexing: Sendable, Hashable {
        /// Literal with incremental indexing: the encoder may add it to the dynamic table.
        case incremental
        /// Literal never indexed (nghttp2's `NGHTTP2_NV_FLAG_NO_INDEX`).
        case never
    }

    public var name: String
    public var value: String
    public var indexing: Indexing

    public init(_ name: String, _ value: String, indexing: Indexing = .never) {
        self.name = name
        self.value = value
        self.indexing = indexing
    }
}
