import CRdKafka

/// The consumer's librdkafka calls, in Swift values. Poll thread only, except `memberID`.
extension RDKafkaClient {
    /// Whether librdkafka considers the current assignment lost (the session timed out): its
    /// offsets must not be committed, the partitions may already be another member's.
    var assignmentLost: Bool {
        rd_kafka_assignment_lost(handle) != 0
    }

    /// This member's id in the group; nil before it joined. Any thread.
    var memberID: String? {
        guard let pointer = rd_kafka_memberid(handle) else { return nil }
        defer { rd_kafka_mem_free(handle, pointer) }
        let id = String(cString: pointer)
        return id.isEmpty ? nil : id
    }

    /// Stores offsets for the next commit (`enable.auto.offset.store=false`); the partitions
    /// refused (not assigned: `__STATE`), with why.
    func storeOffsets(_ offsets: [(TopicPartition, Int64)]) -> [(TopicPartition, KafkaError)] {
        let list = RDKafkaTopicPartitionList(offsets: offsets)
        let err = list.withPointer { rd_kafka_offsets_store(handle, $0) }
        return err == RD_KAFKA_RESP_ERR_NO_ERROR ? [] : list.elementErrors
    }

    /// Commits `offsets` and waits for the broker: the offsets it confirmed, or why the whole
    /// commit failed.
    func commitAndWait(_ offsets: [(TopicPartition, Int64)]) -> Result<[(TopicPartition, Int64)], KafkaError> {
        let list = RDKafkaTopicPartitionList(offsets: offsets)
        let err = list.withPointer { rd_kafka_commit(handle, $0, 0) }
        if err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR__NO_OFFSET {
            return .failure(KafkaError(err))
        }
        let failedPartitions = Set(list.elementErrors.map(\.0))
        return .success(offsets.filter { !failedPartitions.contains($0.0) })
    }

    /// Commits `offsets` in the background; the result reaches `callbacks.commitHandler` in a
    /// later poll. An error here means the commit was not even sent.
    func commitInBackground(_ offsets: [(TopicPartition, Int64)]) -> KafkaError? {
        let list = RDKafkaTopicPartitionList(offsets: offsets)
        let err = list.withPointer { rd_kafka_commit(handle, $0, 1) }
        return err == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : KafkaError(err)
    }

    /// Pauses or resumes fetching on `partitions`.
    func setFetchPaused(_ paused: Bool, _ partitions: [TopicPartition]) -> KafkaError? {
        let list = RDKafkaTopicPartitionList(partitions)
        let err = list.withPointer { paused ? rd_kafka_pause_partitions(handle, $0) : rd_kafka_resume_partitions(handle, $0) }
        return err == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : KafkaError(err)
    }

    /// Takes `partitions` inside a rebalance callback: added to the assignment (`incremental`),
    /// or as the whole assignment (eager).
    func assign(_ partitions: [TopicPartition], incremental: Bool) -> KafkaError? {
        let list = RDKafkaTopicPartitionList(partitions)
        if incremental {
            return list.withPointer { rd_kafka_incremental_assign(handle, $0) }.map { KafkaError(taking: $0) }
        }
        let err = list.withPointer { rd_kafka_assign(handle, $0) }
        return err == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : KafkaError(err)
    }

    /// Gives up `partitions` inside a rebalance callback (`incremental`), or the whole assignment
    /// (eager: `partitions` is not read).
    func unassign(_ partitions: [TopicPartition], incremental: Bool) -> KafkaError? {
        if incremental {
            let list = RDKafkaTopicPartitionList(partitions)
            return list.withPointer { rd_kafka_incremental_unassign(handle, $0) }.map { KafkaError(taking: $0) }
        }
        let err = rd_kafka_assign(handle, nil)
        return err == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : KafkaError(err)
    }

    /// Polls the consumer queue: up to `capacity` messages, waiting up to `timeout` milliseconds
    /// for the first only, serving rebalances, logs and commit results on the way. Each message
    /// is read or copied (`reader`) and handed to `record`, or to `other` when it is not a record,
    /// and destroyed at once (a held message pins its whole fetch buffer). Returns how many
    /// messages came.
    ///
    /// Each record is handed out before the next poll: the rebalance handler, which runs inside
    /// a poll, takes the records fetched before it (under the assignment they came with).
    @discardableResult
    func pollConsumer(
        upTo capacity: Int,
        timeout: Int32,
        topicNames: inout RDKafkaTopicNames,
        reader: (any KafkaRecordReader)? = nil,
        record: (KafkaRecord) -> Void,
        other: (RDKafkaConsumed) -> Void
    ) -> Int {
        var timeout = timeout
        var count = 0
        while count < capacity {
            guard let message = rd_kafka_consumer_poll(handle, timeout) else { break }
            timeout = 0
            count += 1
            if let consumed = RDKafkaConsumed(message) {
                other(consumed)
            } else {
                record(KafkaRecord.fetched(message, topicNames: &topicNames, reader: reader))
            }
            rd_kafka_message_destroy(message)
        }
        return count
    }

    /// Serves the final revoke through the rebalance handler, commits nothing of its own
    /// (`enable.auto.commit=false`) and leaves the group.
    func closeConsumer() -> KafkaError? {
        let err = rd_kafka_consumer_close(handle)
        return err == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : KafkaError(err)
    }
}
