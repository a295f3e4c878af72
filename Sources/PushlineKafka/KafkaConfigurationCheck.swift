/// Checks a configuration the way creating the client would (our rules, then librdkafka's own
/// parsing of every property), without creating a client: start-up validation reports every
/// problem before anything connects.
enum KafkaConfigurationCheck {
    /// One line per problem, `property: message`; empty when librdkafka would accept it.
    static func problems(_ properties: () throws(KafkaError) -> [String: String]) -> [String] {
        do throws(KafkaError) {
            try RDKafkaClient.checkConf(try properties())
            return []
        } catch {
            let prefix = "invalid Kafka configuration: "
            guard error.message.hasPrefix(prefix) else { return [error.message] }
            return error.message.dropFirst(prefix.count).components(separatedBy: "; ")
        }
    }
}

extension KafkaConsumerConfiguration {
    /// Every problem creating this consumer would hit, one `property: message` line each.
    public func problems() -> [String] {
        KafkaConfigurationCheck.problems { () throws(KafkaError) in try librdkafkaProperties() }
    }
}

extension KafkaProducerConfiguration {
    /// Every problem creating this producer would hit, one `property: message` line each.
    public func problems() -> [String] {
        KafkaConfigurationCheck.problems { () throws(KafkaError) in try librdkafkaProperties() }
    }
}

#if canImport(Foundation)
import Foundation
#endif
