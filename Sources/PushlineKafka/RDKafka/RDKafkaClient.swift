import CRdKafka
import Logging

/// Owns one `rd_kafka_t` and the callbacks object its opaque points to; destroys both in deinit.
final class RDKafkaClient: @unchecked Sendable {
    // @unchecked Sendable: `handle` and `callbacks` are immutable; librdkafka's API is thread-safe
    // for the calls made through them, and threading rules are kept by the owning consumer/producer.
    let handle: OpaquePointer
    let callbacks: RDKafkaCallbacks
    private let retainedCallbacks: Unmanaged<RDKafkaCallbacks>

    private init(handle: OpaquePointer, callbacks: RDKafkaCallbacks, retained: Unmanaged<RDKafkaCallbacks>) {
        self.handle = handle
        self.callbacks = callbacks
        self.retainedCallbacks = retained
    }

    /// Creates a consumer or producer; every bad property is reported at once.
    static func make(
        type: rd_kafka_type_t,
        properties: [String: String],
        logger: Logger,
        onStatistics: (@Sendable (String) -> Void)?
    ) throws(KafkaError) -> RDKafkaClient {
        let conf = try makeConf(properties)
        let callbacks = RDKafkaCallbacks(
            logger: logger,
            client: type == RD_KAFKA_CONSUMER ? "consumer" : "producer",
            onStatistics: onStatistics
        )
        let retained = Unmanaged.passRetained(callbacks)
        callbacks.install(on: conf, consumer: type == RD_KAFKA_CONSUMER)
        var errorText = [CChar](repeating: 0, count: 512)
        // rd_kafka_new takes ownership of conf only on success.
        guard let handle = rd_kafka_new(type, conf, &errorText, errorText.count) else {
            rd_kafka_conf_destroy(conf)
            retained.release()
            throw KafkaError(code: .invalidArgument, message: "cannot create Kafka client: \(String(errorBuffer: errorText))")
        }
        // Route log lines to the main queue, so they are served by our poll calls (log.queue=true).
        _ = rd_kafka_set_log_queue(handle, nil)
        return RDKafkaClient(handle: handle, callbacks: callbacks, retained: retained)
    }

    /// Builds an `rd_kafka_conf_t`, collecting every rejected property before failing.
    static func makeConf(_ properties: [String: String]) throws(KafkaError) -> OpaquePointer {
        let conf = rd_kafka_conf_new()!
        var problems: [(property: String, message: String)] = []
        var errorText = [CChar](repeating: 0, count: 512)
        for (name, value) in properties.sorted(by: { $0.key < $1.key }) {
            let result = rd_kafka_conf_set(conf, name, value, &errorText, errorText.count)
            if result != RD_KAFKA_CONF_OK {
                problems.append((name, String(errorBuffer: errorText)))
            }
        }
        guard problems.isEmpty else {
            rd_kafka_conf_destroy(conf)
            throw KafkaError.configuration(problems)
        }
        return conf
    }

    /// The client's fatal error, if one was raised.
    func fatalError() -> KafkaError? {
        guard callbacks.sawFatal.load(ordering: .acquiring) else { return nil }
        return KafkaError.fatalError(of: handle)
    }

    /// Cuts every broker connection of this consumer; librdkafka fails what was outstanding on them
    /// with `__TRANSPORT` and reconnects. For a join the coordinator never answers (`StalledJoin`):
    /// librdkafka then sends a new JoinGroup, with the same member id, at once. Any thread.
    /// Returns how many connections were cut.
    func dropConnections() -> Int {
        // Their "Disconnected" lines and errors are ours, not an outage.
        callbacks.expectDisconnects(for: .seconds(2))
        return callbacks.sockets.shutdownAll()
    }

    deinit {
        // Blocks until librdkafka's threads are gone; no callback can run after it returns.
        rd_kafka_destroy(handle)
        retainedCallbacks.release()
    }
}

extension String {
    /// The NUL-terminated text librdkafka wrote into an error buffer.
    init(errorBuffer: [CChar]) {
        let bytes = errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        self = String(decoding: bytes, as: UTF8.self)
    }
}
