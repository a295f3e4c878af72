import CRdKafka

/// An error from librdkafka or from this wrapper, with librdkafka's error code.
///
/// `isRetriable`: the same operation may succeed if tried again (queue full, timeouts, leader
/// changes). `isFatal`: the client instance is unusable (for example an idempotent producer that
/// lost its guarantees) and must be closed and recreated.
public struct KafkaError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: Code
    /// What happened, naming the thing (property, topic, partition) where known.
    public var message: String
    public var isRetriable: Bool
    public var isFatal: Bool
    /// For configuration errors: every rejected property name.
    public var properties: [String]

    public init(code: Code, message: String, isRetriable: Bool = false, isFatal: Bool = false, properties: [String] = []) {
        self.code = code
        self.message = message
        self.isRetriable = isRetriable
        self.isFatal = isFatal
        self.properties = properties
    }

    public var description: String {
        "Kafka error \(code.name) (\(code.rawValue)): \(message)"
            + (isFatal ? " [fatal]" : "") + (isRetriable ? " [retriable]" : "")
    }

    /// Maps a bare response code; retriability follows the Kafka protocol's retriable errors
    /// and librdkafka's transient local errors.
    init(_ err: rd_kafka_resp_err_t, message: String? = nil) {
        self.init(mapping: Code(rawValue: err.rawValue), message: message)
    }

    /// Maps a code the way errors from librdkafka are mapped (retriable set, `_FATAL`).
    init(mapping code: Code, message: String? = nil) {
        let err = rd_kafka_resp_err_t(rawValue: code.rawValue)
        self.init(
            code: code,
            message: message ?? String(cString: rd_kafka_err2str(err)),
            isRetriable: Code.retriable.contains(code),
            isFatal: code == .fatal
        )
    }

    /// Takes ownership of `error` (destroyed here) and maps it with librdkafka's own flags.
    init(taking error: OpaquePointer) {
        defer { rd_kafka_error_destroy(error) }
        let code = Code(rawValue: rd_kafka_error_code(error).rawValue)
        self.init(
            code: code,
            message: String(cString: rd_kafka_error_string(error)),
            isRetriable: rd_kafka_error_is_retriable(error) != 0 || Code.retriable.contains(code),
            isFatal: rd_kafka_error_is_fatal(error) != 0
        )
    }

    /// The client's fatal error (after a `_FATAL` code), or nil when there is none.
    static func fatalError(of handle: OpaquePointer) -> KafkaError? {
        var buffer = [CChar](repeating: 0, count: 512)
        let err = rd_kafka_fatal_error(handle, &buffer, buffer.count)
        guard err != RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
        var error = KafkaError(err, message: String(errorBuffer: buffer))
        error.isFatal = true
        error.isRetriable = false
        return error
    }

    static func configuration(_ problems: [(property: String, message: String)]) -> KafkaError {
        KafkaError(
            code: .invalidArgument,
            message: "invalid Kafka configuration: "
                + problems.map { "\($0.property): \($0.message)" }.joined(separator: "; "),
            properties: problems.map(\.property)
        )
    }
}
