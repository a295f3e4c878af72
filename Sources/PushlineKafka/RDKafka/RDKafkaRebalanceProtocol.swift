import CRdKafka

/// The group's rebalance protocol, as librdkafka reports it inside a rebalance callback.
enum RDKafkaRebalanceProtocol {
    /// True for COOPERATIVE (cooperative-sticky, and every group.protocol=consumer group), false
    /// for EAGER; nil when librdkafka cannot say (it returns NULL: no group yet).
    static func isCooperative(_ handle: OpaquePointer) -> Bool? {
        rd_kafka_rebalance_protocol(handle).map { String(cString: $0) == "COOPERATIVE" }
    }
}
