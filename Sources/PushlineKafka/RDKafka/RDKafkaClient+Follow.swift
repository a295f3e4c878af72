import CRdKafka

/// The librdkafka calls of a client that reads a whole topic outside any consumer group
/// (`TopicFollowerCore`): create the topic, learn its partitions, assign them from the beginning,
/// poll. The follower's thread only.
extension RDKafkaClient {
    /// Creates `topic` with `partitions` partitions and `configs` (the broker's replication
    /// factor), waiting up to `timeout`. nil when it was created; `.topicAlreadyExists`-coded
    /// errors when it was there already.
    func createTopic(_ topic: String, partitions: Int32, configs: [String: String], timeout: Duration) -> KafkaError? {
        var errorText = [CChar](repeating: 0, count: 512)
        guard let newTopic = rd_kafka_NewTopic_new(topic, partitions, -1, &errorText, errorText.count) else {
            return KafkaError(code: .invalidArgument, message: String(errorBuffer: errorText))
        }
        defer { rd_kafka_NewTopic_destroy(newTopic) }
        for (name, value) in configs.sorted(by: { $0.key < $1.key }) {
            let err = rd_kafka_NewTopic_set_config(newTopic, name, value)
            if err != RD_KAFKA_RESP_ERR_NO_ERROR { return KafkaError(err, message: "topic config \(name)=\(value)") }
        }
        let milliseconds = Int32(clamping: timeout.milliseconds)
        let options = rd_kafka_AdminOptions_new(handle, RD_KAFKA_ADMIN_OP_CREATETOPICS)
        defer { rd_kafka_AdminOptions_destroy(options) }
        _ = rd_kafka_AdminOptions_set_request_timeout(options, milliseconds, &errorText, errorText.count)
        let queue = rd_kafka_queue_new(handle)
        defer { rd_kafka_queue_destroy(queue) }
        var topics: [OpaquePointer?] = [newTopic]
        // The request copies what it needs; the NewTopic and options stay ours.
        topics.withUnsafeMutableBufferPointer { rd_kafka_CreateTopics(handle, $0.baseAddress, 1, options, queue) }
        guard let event = rd_kafka_queue_poll(queue, milliseconds + 1000) else {
            return KafkaError(code: .timedOut, message: "CreateTopics: no answer")
        }
        defer { rd_kafka_event_destroy(event) }
        let eventError = rd_kafka_event_error(event)
        if eventError != RD_KAFKA_RESP_ERR_NO_ERROR {
            return KafkaError(eventError, message: String(cString: rd_kafka_event_error_string(event)))
        }
        guard let result = rd_kafka_event_CreateTopics_result(event) else {
            return KafkaError(code: .invalidArgument, message: "CreateTopics: unexpected event")
        }
        var count = 0
        guard let results = rd_kafka_CreateTopics_result_topics(result, &count), count > 0, let first = results[0] else {
            return nil
        }
        let err = rd_kafka_topic_result_error(first)
        guard err != RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
        let text = rd_kafka_topic_result_error_string(first).map { String(cString: $0) } ?? ""
        return KafkaError(err, message: text)
    }

    /// How many partitions `topic` has, asked of the cluster (up to `timeout`); nil when the
    /// cluster does not know it.
    func partitionCount(of topic: String, timeout: Duration) throws(KafkaError) -> Int32? {
        guard let topicHandle = rd_kafka_topic_new(handle, topic, nil) else {
            throw KafkaError(rd_kafka_last_error(), message: "cannot make a handle for topic \(topic)")
        }
        defer { rd_kafka_topic_destroy(topicHandle) }
        var metadata: UnsafePointer<rd_kafka_metadata>?
        let err = rd_kafka_metadata(handle, 0, topicHandle, &metadata, Int32(clamping: timeout.milliseconds))
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else {
            throw KafkaError(err, message: "metadata of \(topic): \(String(cString: rd_kafka_err2str(err)))")
        }
        defer { rd_kafka_metadata_destroy(metadata) }
        let topics = UnsafeBufferPointer(start: metadata.pointee.topics, count: Int(metadata.pointee.topic_cnt))
        guard let entry = topics.first(where: { String(cString: $0.topic) == topic }),
            entry.err == RD_KAFKA_RESP_ERR_NO_ERROR, entry.partition_cnt > 0
        else { return nil }
        return entry.partition_cnt
    }

    /// Reads partitions `0..<count` of `topic` from their first offset, outside any group.
    func assignFromBeginning(_ topic: String, count: Int32) -> KafkaError? {
        let list = RDKafkaTopicPartitionList(
            offsets: (0..<count).map { (TopicPartition(topic: topic, partition: $0), Int64(RD_KAFKA_OFFSET_BEGINNING)) }
        )
        let err = list.withPointer { rd_kafka_assign(handle, $0) }
        return err == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : KafkaError(err)
    }

    /// Polls up to `timeout` milliseconds for the first message, then takes what is ready (at
    /// most `capacity`): records to `record`, ends of partitions (their numbers) to `end`,
    /// errors to `error`.
    func pollFollowed(
        upTo capacity: Int,
        timeout: Int32,
        topicNames: inout RDKafkaTopicNames,
        record: (KafkaRecord) -> Void,
        end: (Int32) -> Void,
        error: (KafkaError) -> Void
    ) {
        var timeout = timeout
        for _ in 0..<capacity {
            guard let message = rd_kafka_consumer_poll(handle, timeout) else { return }
            timeout = 0
            switch RDKafkaConsumed(message) {
            case nil: record(KafkaRecord.fetched(message, topicNames: &topicNames, reader: nil))
            case .endOfPartition: end(message.pointee.partition)
            case .error(let failure): error(failure)
            }
            rd_kafka_message_destroy(message)
        }
    }

    /// Stops fetching (no group to leave).
    func unassignAll() {
        _ = rd_kafka_assign(handle, nil)
    }
}
