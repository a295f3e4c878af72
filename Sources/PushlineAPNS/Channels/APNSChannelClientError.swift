/// Why a channel-management request got no answer from APNs (an answer, even a refusal, is an
/// `APNSChannelAnswer`).
public enum APNSChannelClientError: Error, Sendable, CustomStringConvertible {
    /// No connection: refused, unreachable, the proxy said no, or the TLS handshake failed.
    case connection(String)
    /// No answer within the request timeout.
    case timeout(Duration)
    /// The connection failed with the request on it.
    case stream(String)
    /// A provider token could not be signed.
    case providerToken(String)

    public var description: String {
        switch self {
        case .connection(let detail): "cannot connect: \(detail)"
        case .timeout(let limit): "no answer within \(limit)"
        case .stream(let detail): "the connection failed before an answer: \(detail)"
        case .providerToken(let detail): "cannot sign a provider token: \(detail)"
        }
    }
}
