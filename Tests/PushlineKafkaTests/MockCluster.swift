import CRdKafka

/// librdkafka's in-process mock cluster (`test.mock.num.brokers`), owned by a client handle of its
/// own, so that a `KafkaConsumer` connects to it like to any broker and the test can make the
/// cluster misbehave.
final class MockCluster: @unchecked Sendable {
    // @unchecked Sendable: both pointers are immutable; the mock cluster's API is thread-safe.
    private let handle: OpaquePointer
    private let cluster: OpaquePointer
    let bootstrapServers: String

    /// JoinGroup's API key (librdkafka's protocol header is not public).
    static let joinGroup: Int16 = 11

    init() throws {
        let conf = rd_kafka_conf_new()!
        var errorText = [CChar](repeating: 0, count: 512)
        guard rd_kafka_conf_set(conf, "test.mock.num.brokers", "1", &errorText, errorText.count) == RD_KAFKA_CONF_OK,
            // rd_kafka_new takes ownership of conf only on success.
            let handle = rd_kafka_new(RD_KAFKA_PRODUCER, conf, &errorText, errorText.count)
        else {
            rd_kafka_conf_destroy(conf)
            throw MockClusterError(text: String(decoding: errorText.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        self.handle = handle
        // The cluster belongs to the handle: destroyed with it.
        self.cluster = rd_kafka_handle_mock_cluster(handle)
        self.bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(cluster))
    }

    func createTopic(_ name: String, partitions: Int32) {
        _ = rd_kafka_mock_topic_create(cluster, name, partitions, 1)
    }

    /// OffsetCommit's API key.
    static let offsetCommit: Int16 = 8

    /// The next `count` `apiKey` requests to the cluster are answered with `error`.
    func failNextRequests(apiKey: Int16, count: Int, error: rd_kafka_resp_err_t) {
        let errors = [rd_kafka_resp_err_t](repeating: error, count: count)
        rd_kafka_mock_push_request_errors_array(cluster, apiKey, count, errors)
    }

    /// The next `apiKey` request to broker 1 is answered only after `milliseconds` (a
    /// coordinator that sits on a JoinGroup).
    func delayNextRequest(apiKey: Int16, milliseconds: Int32) {
        _ = pushline_mock_push_request_error_rtt(cluster, 1, apiKey, RD_KAFKA_RESP_ERR_NO_ERROR, milliseconds)
    }

    deinit {
        rd_kafka_destroy(handle)
    }
}

struct MockClusterError: Error {
    var text: String
}
