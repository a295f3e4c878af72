/// What a stream submitted with `HTTP2ClientHandler.submit(tag:body:writeHeaders:)` carries to its completion:
/// two words of the caller's own and, if it needs one, an object kept alive until then (a pool
/// passes its immutable request batch, the request's id and index, and the send time).
public struct HTTP2StreamTag {
    public var object: AnyObject?
    public var id: UInt64
    public var value: UInt64

    public init(object: AnyObject? = nil, id: UInt64, value: UInt64 = 0) {
        self.object = object
        self.id = id
        self.value = value
    }
}
