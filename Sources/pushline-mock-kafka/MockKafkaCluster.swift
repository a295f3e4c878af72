import CPushlineMockKafka
import CRdKafka

/// librdkafka's mock cluster, owned with the client handle it runs in (rd_kafka_mock_cluster_new
/// needs one for its thread, timers and log): brokers listening on 127.0.0.1, each on a port the
/// kernel picked, serving any process that connects.
final class MockKafkaCluster: @unchecked Sendable {
    // @unchecked Sendable: both pointers are immutable once made, and the mock cluster's API
    // hands every call to the cluster's own thread (an op queue), so any thread may call it.
    private let handle: OpaquePointer
    private let cluster: OpaquePointer
    let brokers: Int32
    /// The brokers' real addresses, comma-separated (what `--advertise` does not change).
    let bootstrapServers: String

    init(brokers: Int32, debug: String?) throws(MockKafkaError) {
        let conf = rd_kafka_conf_new()!
        var errorText = [CChar](repeating: 0, count: 512)
        func set(_ name: String, _ value: String) -> Bool {
            rd_kafka_conf_set(conf, name, value, &errorText, errorText.count) == RD_KAFKA_CONF_OK
        }
        // The handle only hosts the cluster: it never produces, and it logs what `debug` asks.
        // Without `debug`, warnings and worse only (not the notice that it has no bootstrap.servers).
        guard set("client.id", "pushline-mock-kafka"), debug.map({ set("debug", $0) }) ?? set("log_level", "4"),
            // rd_kafka_new takes ownership of conf only on success.
            let handle = rd_kafka_new(RD_KAFKA_PRODUCER, conf, &errorText, errorText.count)
        else {
            rd_kafka_conf_destroy(conf)
            throw MockKafkaError(message: String(decoding: errorText.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        guard let cluster = rd_kafka_mock_cluster_new(handle, brokers) else {
            rd_kafka_destroy(handle)
            throw MockKafkaError(message: "rd_kafka_mock_cluster_new failed (no loopback port?)")
        }
        self.handle = handle
        self.cluster = cluster
        self.brokers = brokers
        self.bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(cluster))
    }

    /// Creates `name` with `partitions`, replicated on up to 3 brokers (the mock's own default).
    func createTopic(_ name: String, partitions: Int32) throws(MockKafkaError) {
        let err = rd_kafka_mock_topic_create(cluster, name, partitions, min(3, brokers))
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else {
            throw MockKafkaError(message: "\(name): \(String(cString: rd_kafka_err2name(err)))")
        }
    }

    /// Broker `broker` (1-based) names 127.0.0.1:`port` in Metadata answers from now on.
    func advertise(broker: Int32, port: Int32) throws(MockKafkaError) {
        try Self.require(pushline_mock_advertise(cluster, broker, "127.0.0.1", port), "rd_kafka_mock_broker_set_host_port (2.5)")
    }

    /// Broker `broker` is the controller in Metadata answers: admin requests (CreateTopics,
    /// DescribeConfigs), which the mock does not implement, are then refused at once as
    /// unsupported instead of waiting for a controller until they time out.
    func setController(broker: Int32) throws(MockKafkaError) {
        try Self.require(pushline_mock_controller(cluster, broker), "rd_kafka_mock_set_controller_id (2.16)")
    }

    func setConsumerSessionTimeout(milliseconds: Int32) throws(MockKafkaError) {
        try Self.require(pushline_mock_consumer_session_timeout(cluster, milliseconds), "group.consumer.session.timeout.ms")
    }

    func setConsumerHeartbeatInterval(milliseconds: Int32) throws(MockKafkaError) {
        try Self.require(pushline_mock_consumer_heartbeat_interval(cluster, milliseconds), "group.consumer.heartbeat.interval.ms")
    }

    func setInitialRebalanceDelay(milliseconds: Int32) throws(MockKafkaError) {
        try Self.require(pushline_mock_initial_rebalance_delay(cluster, milliseconds), "group.initial.rebalance.delay.ms")
    }

    /// `done`: the run-time librdkafka had the mock call for `what` (looked up by name).
    private static func require(_ done: Bool, _ what: String) throws(MockKafkaError) {
        guard done else { throw MockKafkaError(message: "this librdkafka's mock cluster lacks \(what): a newer librdkafka is needed") }
    }

    deinit {
        rd_kafka_mock_cluster_destroy(cluster)
        rd_kafka_destroy(handle)
    }
}

struct MockKafkaError: Error {
    var message: String
}
