import CRdKafka

extension KafkaError {
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
}
