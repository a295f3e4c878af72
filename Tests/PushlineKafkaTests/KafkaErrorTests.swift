import Testing

@testable import PushlineKafka

@Suite struct KafkaErrorTests {
    @Test func transientErrorsAreRetriable() {
        for code in [KafkaError.Code.queueFull, .messageTimedOut, .transport, .notLeaderForPartition, .requestTimedOut] {
            let error = KafkaError(mapping: code)
            #expect(error.isRetriable, "\(code)")
            #expect(!error.isFatal)
        }
    }

    @Test func permanentErrorsAreNotRetriable() {
        for code in [KafkaError.Code.messageTooLarge, .invalidArgument, .state, .topicAlreadyExists] {
            #expect(!KafkaError(mapping: code).isRetriable, "\(code)")
        }
        let fatal = KafkaError(mapping: .fatal)
        #expect(fatal.isFatal && !fatal.isRetriable)
    }

    @Test func codesCarryLibrdkafkaNamesAndMessages() {
        #expect(KafkaError.Code.queueFull.name == "_QUEUE_FULL")
        #expect(KafkaError.Code.messageTooLarge.name == "MSG_SIZE_TOO_LARGE")
        let error = KafkaError(mapping: .queueFull)
        #expect(error.message.lowercased().contains("queue"))
        #expect(error.description.contains("_QUEUE_FULL"))
    }

    @Test func versionWarnings() {
        #expect(LibrdkafkaVersion(hex: 0x0200_02ff).description == "2.0.2")
        #expect(LibrdkafkaVersion(hex: 0x0200_02ff).warnings.count == 2)
        #expect(LibrdkafkaVersion(hex: 0x0205_00ff).warnings.count == 1)
        #expect(LibrdkafkaVersion(hex: 0x020b_00ff).warnings.isEmpty)
        // The hex and the string librdkafka reports agree.
        #expect(LibrdkafkaVersion.runtimeString.hasPrefix(LibrdkafkaVersion.runtime.description))
    }
}
