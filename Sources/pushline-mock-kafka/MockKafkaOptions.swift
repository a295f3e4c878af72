/// The command line of `pushline-mock-kafka`.
struct MockKafkaOptions {
    static let usage = """
        usage: pushline-mock-kafka [--brokers N] [--topic NAME:PARTITIONS]... [--advertise PORT[,PORT]...]
                                   [--consumer-session-timeout-ms MS] [--consumer-heartbeat-interval-ms MS]
                                   [--initial-rebalance-delay-ms MS] [--debug CONTEXTS]

        librdkafka's mock cluster as a broker process: N brokers (1) on 127.0.0.1, each on a port the
        kernel picks. Prints the bootstrap servers on its first stdout line, then answers stdin lines
        "topic NAME PARTITIONS [CONFIG=VALUE]..." with "ok ..." or "error: ...". Runs until SIGTERM
        or SIGINT (the end of stdin only ends the commands).

          --advertise PORT,...   the port each broker names in Metadata answers (a proxy in front of it)
          --consumer-*           the broker's group.consumer.* settings for KIP-848 groups (mock: 30000, 3000)
          --initial-rebalance-delay-ms  group.initial.rebalance.delay.ms for classic groups (mock: 3000)
          --debug CONTEXTS       librdkafka debug contexts of the cluster's handle (mock,protocol...), to stderr
        """

    var brokers: Int32 = 1
    var topics: [(name: String, partitions: Int32)] = []
    var advertisedPorts: [Int32] = []
    var consumerSessionTimeoutMilliseconds: Int32?
    var consumerHeartbeatIntervalMilliseconds: Int32?
    var initialRebalanceDelayMilliseconds: Int32?
    var debug: String?

    /// Parses `arguments` (without the program's name); the error is a line for standard error.
    init(arguments: [String]) throws(MockKafkaUsageError) {
        var remaining = arguments[...]
        func value(_ flag: String) throws(MockKafkaUsageError) -> String {
            guard let next = remaining.popFirst() else { throw MockKafkaUsageError(message: "\(flag) needs a value") }
            return next
        }
        func milliseconds(_ flag: String) throws(MockKafkaUsageError) -> Int32 {
            let text = try value(flag)
            guard let number = Int32(text), number > 0 else {
                throw MockKafkaUsageError(message: "\(flag): a positive number of milliseconds, got '\(text)'")
            }
            return number
        }
        while let flag = remaining.popFirst() {
            switch flag {
            case "--brokers":
                let text = try value(flag)
                guard let count = Int32(text), (1...16).contains(count) else {
                    throw MockKafkaUsageError(message: "--brokers: 1 to 16, got '\(text)'")
                }
                brokers = count
            case "--topic":
                topics.append(try Self.topic(try value(flag)))
            case "--advertise":
                let text = try value(flag)
                let ports = text.split(separator: ",").map { Int32($0) }
                guard !ports.isEmpty, ports.allSatisfy({ $0.map { (1...65535).contains($0) } ?? false }) else {
                    throw MockKafkaUsageError(message: "--advertise: ports separated by commas, got '\(text)'")
                }
                advertisedPorts = ports.compactMap { $0 }
            case "--consumer-session-timeout-ms":
                consumerSessionTimeoutMilliseconds = try milliseconds(flag)
            case "--consumer-heartbeat-interval-ms":
                consumerHeartbeatIntervalMilliseconds = try milliseconds(flag)
            case "--initial-rebalance-delay-ms":
                initialRebalanceDelayMilliseconds = try milliseconds(flag)
            case "--debug":
                debug = try value(flag)
            default:
                throw MockKafkaUsageError(message: "unknown argument '\(flag)'")
            }
        }
        if !advertisedPorts.isEmpty && advertisedPorts.count != Int(brokers) {
            throw MockKafkaUsageError(message: "--advertise names \(advertisedPorts.count) ports for \(brokers) brokers")
        }
    }

    /// NAME:PARTITIONS (one partition when only NAME is given).
    static func topic(_ text: String) throws(MockKafkaUsageError) -> (name: String, partitions: Int32) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let name = String(parts[0])
        let partitions = parts.count > 1 ? Int32(parts[1]) : 1
        guard !name.isEmpty, let partitions, partitions > 0 else {
            throw MockKafkaUsageError(message: "a topic is NAME:PARTITIONS, got '\(text)'")
        }
        return (name, partitions)
    }
}

struct MockKafkaUsageError: Error {
    var message: String
}
