/// A topic a `KafkaProducer` writes to, resolved once (`KafkaProducer.topic(_:)`): producing
/// through it costs no lookup of the topic's name per record. Cheap to copy; valid for the
/// producer's lifetime, and keeps the underlying client alive while it is held.
public struct KafkaTopic: Sendable {
    let handle: RDKafkaTopic

    init(handle: RDKafkaTopic) {
        self.handle = handle
    }

    public var name: String { handle.name }
}

extension KafkaTopic: Equatable {
    /// The same topic of the same producer (one handle per topic and producer).
    public static func == (lhs: KafkaTopic, rhs: KafkaTopic) -> Bool {
        lhs.handle === rhs.handle
    }
}
