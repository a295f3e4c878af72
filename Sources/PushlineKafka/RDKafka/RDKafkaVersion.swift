import CRdKafka

/// The version of the librdkafka loaded at run time, as librdkafka reports it.
enum RDKafkaVersion {
    /// librdkafka's hex encoding: 0xMMmmrrxx (major, minor, revision, pre-release).
    static var hex: Int32 { rd_kafka_version() }

    /// librdkafka's own version string.
    static var string: String { String(cString: rd_kafka_version_str()) }
}
