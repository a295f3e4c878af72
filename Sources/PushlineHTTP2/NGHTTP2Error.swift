import CNGHTTP2

/// A connection-level failure reported by nghttp2: which call failed, its library error code
/// (`nghttp2_error`, negative) and nghttp2's message. Fired through the pipeline before the
/// connection is closed.
public struct NGHTTP2Error: Error, Sendable, Hashable, CustomStringConvertible {
    public var operation: String
    public var code: Int32

    public init(_ operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    public var message: String { String(cString: nghttp2_strerror(code)) }

    public var description: String { "\(operation) failed: nghttp2 error \(code) (\(message))" }
}
