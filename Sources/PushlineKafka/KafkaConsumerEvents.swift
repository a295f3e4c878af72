/// The consumer's events as an `AsyncSequence`; iterate it from one task.
///
/// Ends when the consumer closes; throws a fatal `KafkaError` if the client fails for good.
/// Reading a `.records` batch frees its place in the consumer's bounded buffer
/// (`maxBufferedRecords`), which is what lets fetching resume.
public struct KafkaConsumerEvents: AsyncSequence, Sendable {
    public typealias Element = KafkaConsumerEvent
    let stream: AsyncThrowingStream<KafkaConsumerEvent, any Error>
    let core: ConsumerCore
    /// The priority lane's records (they have a buffer of their own).
    let priority: Bool

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), core: core, priority: priority)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<KafkaConsumerEvent, any Error>.AsyncIterator
        let core: ConsumerCore
        let priority: Bool

        public mutating func next() async throws -> KafkaConsumerEvent? {
            let event = try await base.next()
            if case .records(let records) = event {
                core.delivered(records.count, priority: priority)
            }
            return event
        }
    }
}
