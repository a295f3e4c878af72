import CRdKafka
import Glibc

/// Consumed topics' names, made once: a message names its topic by the `rd_kafka_topic_t` it
/// came from, and a name longer than a small string's 15 bytes would otherwise cost an
/// allocation per record. The known name is checked against the handle's own bytes each time
/// (no allocation), so a handle freed and its address reused for another topic is never
/// misnamed. Poll thread only.
struct RDKafkaTopicNames {
    /// The last topic seen: consecutive messages are mostly of one topic.
    private var last: (handle: OpaquePointer, name: String)?

    mutating func name(of handle: OpaquePointer?) -> String {
        guard let handle else { return "" }
        let cName = rd_kafka_topic_name(handle)!
        if let last, last.handle == handle, Self.equal(last.name, cName) { return last.name }
        let name = String(cString: cName)
        last = (handle, name)
        return name
    }

    /// One `memcmp` on the name's bytes (`elementsEqual` on its UTF-8 view went through the
    /// collection's witnesses byte by byte, on every record).
    private static func equal(_ name: String, _ cName: UnsafePointer<CChar>) -> Bool {
        let count = strlen(cName)
        var name = name
        return name.withUTF8 { $0.count == count && (count == 0 || memcmp($0.baseAddress!, cName, count) == 0) }
    }
}
