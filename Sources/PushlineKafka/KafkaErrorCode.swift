extension KafkaError {
    /// librdkafka's response error code: negative values are client-local, positive values
    /// are Kafka protocol error codes. The named codes, and `name`, come from librdkafka
    /// (RDKafka/KafkaErrorCode+RDKafka.swift).
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        public var description: String { name }
    }
}
