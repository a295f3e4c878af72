import CRdKafka

extension RDKafkaClient {
    /// Parses `properties` the way `make` would (every rejected property is reported at once),
    /// then drops the result: no client is created.
    static func checkConf(_ properties: [String: String]) throws(KafkaError) {
        let conf = try makeConf(properties)
        rd_kafka_conf_destroy(conf)
    }
}
