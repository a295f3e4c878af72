import CRdKafka
import Logging
import Synchronization

/// Receives group rebalances on the consumer's poll thread; the handler takes or gives up the
/// partitions (`RDKafkaClient.assign`/`unassign`) before it returns.
protocol RDKafkaRebalanceHandler: AnyObject {
    func rebalance(_ rebalance: RDKafkaRebalance)
}

/// Receives the results of background offset commits on the consumer's poll thread.
protocol RDKafkaCommitHandler: AnyObject {
    /// The offsets the broker confirmed.
    func committed(_ offsets: [(TopicPartition, Int64)])
    /// The commit failed as a whole; what it carried stays stored.
    func commitFailed(_ error: KafkaError)
}

/// The Swift side of librdkafka's callbacks, reached through the conf opaque (`Unmanaged`).
///
/// Retained by `RDKafkaClient` from before `rd_kafka_new` until after `rd_kafka_destroy`, so every
/// callback finds it alive.
final class RDKafkaCallbacks: @unchecked Sendable {
    // @unchecked Sendable: `logger` and `onStatistics` are immutable; `sawFatal` is atomic;
    // `rebalanceHandler` is written once by the consumer before its poll thread starts (Thread.start
    // orders that write before every read) and read only on that thread.
    let logger: Logger
    let onStatistics: (@Sendable (String) -> Void)?
    let sawFatal = Atomic<Bool>(false)
    weak var rebalanceHandler: (any RDKafkaRebalanceHandler)?
    /// Written and read like `rebalanceHandler`.
    weak var commitHandler: (any RDKafkaCommitHandler)?
    /// "consumer" or "producer", in the reachability lines.
    let client: String
    private let reachability = Mutex(KafkaReachability())
    /// Whether `reachability` says unreachable: the success path reads only this (per delivery).
    private let unreachable = Atomic<Bool>(false)
    /// The consumer's broker sockets (`RDKafkaClient.dropConnections`).
    let sockets = RDKafkaSockets()
    /// Until when connection failures are the client's own doing (`dropConnections`): logged at
    /// debug level, not counted as Kafka not answering.
    private let quietUntil = Mutex<ContinuousClock.Instant?>(nil)

    init(logger: Logger, client: String, onStatistics: (@Sendable (String) -> Void)?) {
        self.logger = logger
        self.client = client
        self.onStatistics = onStatistics
    }

    /// Errors that say Kafka (or its group coordinator) does not answer right now: librdkafka
    /// retries them; they feed `reachability` instead of a line each.
    static let unreachableCodes: Set<KafkaError.Code> = [
        .allBrokersDown, .transport, .timedOut, .requestTimedOut,
        KafkaError.Code(RD_KAFKA_RESP_ERR__RESOLVE),
        KafkaError.Code(RD_KAFKA_RESP_ERR__WAIT_COORD),
        KafkaError.Code(RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE),
        KafkaError.Code(RD_KAFKA_RESP_ERR_NOT_COORDINATOR),
        KafkaError.Code(RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION),
    ]

    /// librdkafka's log facilities whose lines are per-connection chatter (each connection's
    /// "Disconnected", "Connection refused", request timeouts): debug level, and a failure to reach.
    static let connectionFacilities: Set<String> = ["FAIL", "REQTMOUT"]

    /// Kafka did not answer (`error`, or a connection's log line): logged at debug level; the first
    /// one of an outage, and a reminder now and then, at warning level.
    func kafkaFailed(_ detail: @autoclosure () -> String) {
        let text = detail()
        logger.debug("\(text)", metadata: ["kafka.client": "\(client)"])
        if let until = quietUntil.withLock({ $0 }), ContinuousClock.now < until { return }
        let report = reachability.withLock { state in
            let report = state.failed(at: .now)
            unreachable.store(state.isUnreachable, ordering: .releasing)
            return report
        }
        switch report {
        case .unreachable:
            logger.warning("Kafka unreachable; retrying", metadata: ["kafka.client": "\(client)", "error": "\(text)"])
        case .stillUnreachable(let since):
            logger.warning(
                "Kafka still unreachable after \(since.components.seconds) s; retrying",
                metadata: ["kafka.client": "\(client)", "error": "\(text)"]
            )
        case .reachable, nil:
            break
        }
    }

    /// The connections are about to be cut on purpose: their failures for `duration` are not an
    /// outage.
    func expectDisconnects(for duration: Duration) {
        quietUntil.withLock { $0 = .now + duration }
    }

    /// Kafka answered (a delivery, a commit, records, an assignment). Cheap while it answers.
    func kafkaAnswered() {
        guard unreachable.load(ordering: .acquiring) else { return }
        let report = reachability.withLock { state in
            let report = state.succeeded(at: .now)
            unreachable.store(state.isUnreachable, ordering: .releasing)
            return report
        }
        if case .reachable(let after) = report {
            logger.notice(
                "Kafka reachable again after \(after.components.seconds) s",
                metadata: ["kafka.client": "\(client)"]
            )
        }
    }

    /// Kafka is unreachable and failures still come, the last within `window`.
    func failingRecently(within window: Duration) -> Bool {
        guard unreachable.load(ordering: .acquiring) else { return false }
        return reachability.withLock { $0.failingRecently(at: .now, within: window) }
    }

    static func from(_ opaque: UnsafeMutableRawPointer?) -> RDKafkaCallbacks? {
        guard let opaque else { return nil }
        return Unmanaged<RDKafkaCallbacks>.fromOpaque(opaque).takeUnretainedValue()
    }

    /// Installs every callback on `conf`; `self` must outlive the client (RDKafkaClient ensures it).
    func install(on conf: OpaquePointer, consumer: Bool) {
        rd_kafka_conf_set_opaque(conf, Unmanaged.passUnretained(self).toOpaque())
        rd_kafka_conf_set_log_cb(conf, rdkafkaLogCallback)
        rd_kafka_conf_set_error_cb(conf, rdkafkaErrorCallback)
        if onStatistics != nil {
            rd_kafka_conf_set_stats_cb(conf, rdkafkaStatisticsCallback)
        }
        if consumer {
            rd_kafka_conf_set_rebalance_cb(conf, rdkafkaRebalanceCallback)
            rd_kafka_conf_set_offset_commit_cb(conf, rdkafkaCommitCallback)
            RDKafkaSockets.install(on: conf)
        } else {
            rd_kafka_conf_set_dr_msg_cb(conf, rdkafkaDeliveryCallback)
        }
    }
}

private func rdkafkaLogCallback(handle: OpaquePointer?, level: Int32, facility: UnsafePointer<CChar>?, message: UnsafePointer<CChar>?) {
    guard let handle, let callbacks = RDKafkaCallbacks.from(rd_kafka_opaque(handle)) else { return }
    let swiftLevel: Logger.Level
    switch level {
    case ...2: swiftLevel = .critical
    case 3: swiftLevel = .error
    case 4: swiftLevel = .warning
    case 5: swiftLevel = .notice
    case 6: swiftLevel = .info
    default: swiftLevel = .debug
    }
    let text = message.map { String(cString: $0) } ?? ""
    let facilityText = facility.map { String(cString: $0) } ?? ""
    if swiftLevel > .debug, RDKafkaCallbacks.connectionFacilities.contains(facilityText) {
        callbacks.kafkaFailed(text)
        return
    }
    callbacks.logger.log(level: swiftLevel, "\(text)", metadata: ["rdkafka.facility": "\(facilityText)"])
}

private func rdkafkaErrorCallback(handle: OpaquePointer?, err: Int32, reason: UnsafePointer<CChar>?, opaque: UnsafeMutableRawPointer?) {
    guard let callbacks = RDKafkaCallbacks.from(opaque) else { return }
    let code = rd_kafka_resp_err_t(rawValue: err)
    let error = KafkaError(code, message: reason.map { String(cString: $0) })
    if code == RD_KAFKA_RESP_ERR__FATAL {
        callbacks.sawFatal.store(true, ordering: .releasing)
        callbacks.logger.critical("\(error)")
    } else if RDKafkaCallbacks.unreachableCodes.contains(error.code) {
        // Broker down, transport: retried by librdkafka; one warning per outage, not one per line.
        callbacks.kafkaFailed("\(error)")
    } else {
        callbacks.logger.warning("\(error)")
    }
}

private func rdkafkaStatisticsCallback(
    handle: OpaquePointer?,
    json: UnsafeMutablePointer<CChar>?,
    length: Int,
    opaque: UnsafeMutableRawPointer?
) -> Int32 {
    guard let callbacks = RDKafkaCallbacks.from(opaque), let json else { return 0 }
    let text = UnsafeRawBufferPointer(start: json, count: length).withMemoryRebound(to: UInt8.self) {
        String(decoding: $0, as: UTF8.self)
    }
    callbacks.onStatistics?(text)
    return 0  // 0: librdkafka frees the JSON buffer.
}

private func rdkafkaRebalanceCallback(
    handle: OpaquePointer?,
    err: rd_kafka_resp_err_t,
    partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?,
    opaque: UnsafeMutableRawPointer?
) {
    guard let handle, let partitions, let callbacks = RDKafkaCallbacks.from(opaque) else { return }
    if let handler = callbacks.rebalanceHandler {
        let kind: RDKafkaRebalance.Kind
        switch err {
        case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
            callbacks.kafkaAnswered()
            kind = .assign
        case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
            kind = .revoke(lost: rd_kafka_assignment_lost(handle) != 0)
        default:
            kind = .failed(KafkaError(err))
        }
        handler.rebalance(
            RDKafkaRebalance(
                kind: kind,
                partitions: RDKafkaTopicPartitionList.partitions(of: partitions),
                cooperative: RDKafkaRebalanceProtocol.isCooperative(handle)
            )
        )
    } else {
        // No consumer (it is being torn down): release the partitions so the group can move on.
        if RDKafkaRebalanceProtocol.isCooperative(handle) == true {
            let error = rd_kafka_incremental_unassign(handle, partitions)
            if let error { rd_kafka_error_destroy(error) }
        } else {
            _ = rd_kafka_assign(handle, nil)
        }
    }
}

private func rdkafkaCommitCallback(
    handle: OpaquePointer?,
    err: rd_kafka_resp_err_t,
    offsets: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?,
    opaque: UnsafeMutableRawPointer?
) {
    guard let callbacks = RDKafkaCallbacks.from(opaque), let handler = callbacks.commitHandler else { return }
    guard let offsets, err == RD_KAFKA_RESP_ERR_NO_ERROR || err == RD_KAFKA_RESP_ERR__NO_OFFSET else {
        if err != RD_KAFKA_RESP_ERR__NO_OFFSET { handler.commitFailed(KafkaError(err)) }
        return
    }
    if err == RD_KAFKA_RESP_ERR_NO_ERROR { callbacks.kafkaAnswered() }
    handler.committed(
        RDKafkaTopicPartitionList.elements(of: offsets)
            .filter { $0.error == RD_KAFKA_RESP_ERR_NO_ERROR && $0.offset >= 0 }
            .map { ($0.partition, $0.offset) }
    )
}

private func rdkafkaDeliveryCallback(handle: OpaquePointer?, message: UnsafePointer<rd_kafka_message_t>?, opaque: UnsafeMutableRawPointer?)
{
    guard let message, let box = message.pointee._private else { return }
    // The producer passed a retained delivery as the per-message opaque; take it back exactly once here.
    let delivery = Unmanaged<KafkaDelivery>.fromOpaque(box).takeRetainedValue()
    if message.pointee.err == RD_KAFKA_RESP_ERR_NO_ERROR {
        // Per delivered record: the callbacks object unretained (it outlives the client).
        if let opaque { Unmanaged<RDKafkaCallbacks>.fromOpaque(opaque)._withUnsafeGuaranteedRef { $0.kafkaAnswered() } }
        var type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        let timestamp = rd_kafka_message_timestamp(message, &type)
        delivery.delivered(
            partition: message.pointee.partition,
            offset: message.pointee.offset,
            timestampMilliseconds: type == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? nil : timestamp
        )
        return
    }
    var error: KafkaError
    if message.pointee.err == RD_KAFKA_RESP_ERR__FATAL, let handle, let fatal = KafkaError.fatalError(of: handle) {
        error = fatal
    } else {
        error = KafkaError(message.pointee.err)
        error.message = "\(delivery.topic): \(error.message)"
    }
    delivery.undelivered(error, record: undeliveredRecord(message.pointee, topic: delivery.topic))
}

/// The record of a failed delivery report, copied out of librdkafka's message (valid only during
/// the callback).
private func undeliveredRecord(_ message: rd_kafka_message_t, topic fallback: String) -> UndeliveredRecord {
    let topic = message.rkt.flatMap { rd_kafka_topic_name($0) }.map { String(cString: $0) } ?? fallback
    let key = message.key.map { Array(UnsafeRawBufferPointer(start: $0, count: message.key_len)) }
    let value = message.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: message.len)) } ?? []
    return UndeliveredRecord(topic: topic, key: key, value: value)
}
