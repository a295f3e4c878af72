import CRdKafka

extension KafkaError {
    /// librdkafka's `rd_kafka_resp_err_t`: negative values are client-local, positive values
    /// are Kafka protocol error codes.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        init(_ err: rd_kafka_resp_err_t) { self.rawValue = err.rawValue }

        /// librdkafka's symbolic name, e.g. `_QUEUE_FULL` or `NOT_LEADER_FOR_PARTITION`.
        public var name: String { String(cString: rd_kafka_err2name(rd_kafka_resp_err_t(rawValue: rawValue))) }
        public var description: String { name }

        public static let invalidArgument = Code(RD_KAFKA_RESP_ERR__INVALID_ARG)
        public static let fatal = Code(RD_KAFKA_RESP_ERR__FATAL)
        public static let queueFull = Code(RD_KAFKA_RESP_ERR__QUEUE_FULL)
        public static let messageTimedOut = Code(RD_KAFKA_RESP_ERR__MSG_TIMED_OUT)
        public static let timedOut = Code(RD_KAFKA_RESP_ERR__TIMED_OUT)
        public static let transport = Code(RD_KAFKA_RESP_ERR__TRANSPORT)
        public static let allBrokersDown = Code(RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
        public static let state = Code(RD_KAFKA_RESP_ERR__STATE)
        public static let unknownTopicOrPartition = Code(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
        public static let localUnknownTopic = Code(RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC)
        public static let messageTooLarge = Code(RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE)
        public static let notLeaderForPartition = Code(RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION)
        public static let requestTimedOut = Code(RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT)
        public static let noOffset = Code(RD_KAFKA_RESP_ERR__NO_OFFSET)
        public static let destroyed = Code(RD_KAFKA_RESP_ERR__DESTROY)
        public static let topicAlreadyExists = Code(RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
        public static let outOfOrderSequence = Code(RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER)

        /// Codes for which retrying the same operation may succeed.
        static let retriable: Set<Code> = [
            queueFull, messageTimedOut, timedOut, transport, allBrokersDown, notLeaderForPartition,
            requestTimedOut, unknownTopicOrPartition,
            Code(RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE),
            Code(RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE),
            Code(RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION),
            Code(RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS),
            Code(RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND),
            Code(RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE),
            Code(RD_KAFKA_RESP_ERR_NOT_COORDINATOR),
            Code(RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS),
            Code(RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR),
            Code(RD_KAFKA_RESP_ERR_FENCED_LEADER_EPOCH),
            Code(RD_KAFKA_RESP_ERR_UNKNOWN_LEADER_EPOCH),
            Code(RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS),
            Code(RD_KAFKA_RESP_ERR_THROTTLING_QUOTA_EXCEEDED),
        ]
    }
}
