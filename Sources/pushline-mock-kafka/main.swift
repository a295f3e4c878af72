import Foundation

// librdkafka's mock cluster as a broker process for the local stack (scripts/lib/stack.py,
// `--broker librdkafka-mock`): see MockKafkaOptions.usage.

let options: MockKafkaOptions
do {
    options = try MockKafkaOptions(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("pushline-mock-kafka: \(error.message)\n\n\(MockKafkaOptions.usage)\n".utf8))
    exit(2)
}

// SIGTERM and SIGINT are blocked before any thread starts (librdkafka's and the cluster's inherit
// the mask), and the main thread takes them with sigwait.
var stopSignals = sigset_t()
sigemptyset(&stopSignals)
sigaddset(&stopSignals, SIGTERM)
sigaddset(&stopSignals, SIGINT)
pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

let cluster: MockKafkaCluster
do {
    cluster = try MockKafkaCluster(brokers: options.brokers, debug: options.debug)
    do {
        try cluster.setController(broker: 1)
    } catch {
        // Not fatal: admin requests then time out instead of being refused.
        FileHandle.standardError.write(Data("pushline-mock-kafka: \(error.message)\n".utf8))
    }
    for (index, port) in options.advertisedPorts.enumerated() {
        try cluster.advertise(broker: Int32(index + 1), port: port)
    }
    if let milliseconds = options.consumerSessionTimeoutMilliseconds {
        try cluster.setConsumerSessionTimeout(milliseconds: milliseconds)
    }
    if let milliseconds = options.consumerHeartbeatIntervalMilliseconds {
        try cluster.setConsumerHeartbeatInterval(milliseconds: milliseconds)
    }
    if let milliseconds = options.initialRebalanceDelayMilliseconds {
        try cluster.setInitialRebalanceDelay(milliseconds: milliseconds)
    }
    for topic in options.topics {
        try cluster.createTopic(topic.name, partitions: topic.partitions)
    }
} catch {
    FileHandle.standardError.write(Data("pushline-mock-kafka: \(error.message)\n".utf8))
    exit(1)
}

/// Writes `line` to standard output at once (unbuffered: the stack waits for each line).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

say(cluster.bootstrapServers)

let commands = Thread {
    while let line = readLine() {
        switch MockKafkaCommand(line: line[...]) {
        case .empty:
            continue
        case .topic(let name, let partitions, let ignoredConfigs):
            do throws(MockKafkaError) {
                try cluster.createTopic(name, partitions: partitions)
                say(
                    ignoredConfigs.isEmpty
                        ? "ok" : "ok (the mock keeps no topic configs: ignored \(ignoredConfigs.joined(separator: ", ")))"
                )
            } catch {
                say("error: \(error.message)")
            }
        case .unknown(let text):
            say("error: unknown command '\(text)' (topic NAME PARTITIONS [CONFIG=VALUE]...)")
        }
    }
}
commands.start()

var received: Int32 = 0
sigwait(&stopSignals, &received)
exit(0)
