/// Errors that stop an APNs client from being built or started (a request never throws: it ends
/// with an `APNSOutcome`).
public enum APNSClientError: Error, Sendable, CustomStringConvertible {
    case credential(String)
    case configuration(String)
    case shutDown

    public var description: String {
        switch self {
        case .credential(let message): return "APNs credential: \(message)"
        case .configuration(let message): return "APNs client configuration: \(message)"
        case .shutDown: return "the APNs client is shut down"
        }
    }
}
