/// Reads consumed records on the consumer's poll thread, in librdkafka's fetch buffer, before
/// anything is copied (`KafkaConsumer(reader:)`).
///
/// A record the reader reads is handed out with what it read (`KafkaRecord.reading`) and without
/// its bytes: its key, value and headers are never copied out of librdkafka (which parses a
/// record's headers, an allocation, on the first look at them). A record it declines keeps
/// everything, as without a reader: the place for records that will need their bytes, such as a
/// malformed job bound for a dead-letter topic.
///
/// Class-bound: the poll thread passes the reader down for every record, and an existential of a
/// value type was copied (through its value witnesses) and destroyed around each call.
public protocol KafkaRecordReader: AnyObject, Sendable {
    /// What the record says, or nil to keep the record's bytes and headers instead. Runs on the
    /// poll thread, once per record, while the bytes are valid only for the call.
    func read(key: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer) -> (any AnyObject & Sendable)?
}
