import CRdKafka

extension KafkaError.Code {
    init(_ err: rd_kafka_resp_err_t) { self.init(rawValue: err.rawValue) }

    /// librdkafka's symbolic name, e.g. `_QUEUE_FULL` or `NOT_LEADER_FOR_PARTITION`.
    public var name: String { String(cString: rd_kafka_err2name(rd_kafka_resp_err_t(rawValue: rawValue))) }

    public static let invalidArgument = Self(RD_KAFKA_RESP_ERR__INVALID_ARG)
    public static let fatal = Self(RD_KAFKA_RESP_ERR__FATAL)
    public static let queueFull = Self(RD_KAFKA_RESP_ERR__QUEUE_FULL)
    public static let messageTimedOut = Self(RD_KAFKA_RESP_ERR__MSG_TIMED_OUT)
    public static let timedOut = Self(RD_KAFKA_RESP_ERR__TIMED_OUT)
    public static let transport = Self(RD_KAFKA_RESP_ERR__TRANSPORT)
    public static let allBrokersDown = Self(RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
    public static let state = Self(RD_KAFKA_RESP_ERR__STATE)
    public static let unknownTopicOrPartition = Self(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
    public static let localUnknownTopic = Self(RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC)
    public static let messageTooLarge = Self(RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE)
    public static let notLeaderForPartition = Self(RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION)
    public static let requestTimedOut = Self(RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT)
    public static let noOffset = Self(RD_KAFKA_RESP_ERR__NO_OFFSET)
    public static let destroyed = Self(RD_KAFKA_RESP_ERR__DESTROY)
    public static let topicAlreadyExists = Self(RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
    public static let outOfOrderSequence = Self(RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER)

    /// Codes for which retrying the same operation may succeed.
    static let retriable: Set<Self> = [
        queueFull, messageTimedOut, timedOut, transport, allBrokersDown, notLeaderForPartition,
        requestTimedOut, unknownTopicOrPartition,
        Self(RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE),
        Self(RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE),
        Self(RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION),
        Self(RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS),
        Self(RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND),
        Self(RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE),
        Self(RD_KAFKA_RESP_ERR_NOT_COORDINATOR),
        Self(RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS),
        Self(RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR),
        Self(RD_KAFKA_RESP_ERR_FENCED_LEADER_EPOCH),
        Self(RD_KAFKA_RESP_ERR_UNKNOWN_LEADER_EPOCH),
        Self(RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS),
        Self(RD_KAFKA_RESP_ERR_THROTTLING_QUOTA_EXCEEDED),
    ]
}
