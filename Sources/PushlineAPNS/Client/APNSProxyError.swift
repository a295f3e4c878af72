/// Why a tunnel through the proxy could not be opened.
public enum APNSProxyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The proxy answered CONNECT with something other than 2xx (407: credentials needed).
    case refused(status: Int, line: String)
    /// The proxy's answer was not an HTTP response, or longer than any sane one.
    case malformedResponse
    /// The connection closed before the proxy answered.
    case closedBeforeAnswer

    public var description: String {
        switch self {
        case .refused(let status, let line): "the proxy refused CONNECT with \(status) (\(line))"
        case .malformedResponse: "the proxy's answer to CONNECT is not an HTTP response"
        case .closedBeforeAnswer: "the proxy closed the connection before answering CONNECT"
        }
    }
}
