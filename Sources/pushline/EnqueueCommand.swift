import ArgumentParser
import Foundation
import Logging
import PushlineAPNSCore
import PushlineKafka
import PushlineWorker
import Synchronization

struct EnqueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enqueue",
        abstract: "Produce NDJSON jobs (one per line) to the jobs topic (or the urgent lane's), keyed by job id, with progress.",
        discussion:
            "Lines are sent as they are (a malformed line is sent too: the worker rejects it with a reason). Exits 1 if any record was not acknowledged."
    )

    @Option(name: .long, help: "The YAML configuration file (only the kafka section is used).")
    var config: String?

    @Option(name: .long, help: "NDJSON file of jobs; '-' for standard input.")
    var file: String = "-"

    @Flag(name: .long, help: "No progress line.")
    var quiet = false

    @Flag(name: .long, help: "Produce to kafka.urgent_jobs_topic (the urgent lane) instead of the jobs topic.")
    var urgent = false

    func run() async throws {
        let configuration = try await loadConfiguration(file: config, kafkaOnly: true)
        if urgent && configuration.kafka.urgentJobsTopic.isEmpty {
            throw ExitFailure.configuration(["--urgent: kafka.urgent_jobs_topic is not set"])
        }
        PushlineLogging.bootstrap(level: "warning", format: "auto")
        let logger = Logger(label: "pushline.enqueue")
        let data: Data
        do {
            data = file == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            throw ExitFailure.configuration(["--file: cannot read '\(file)': \(error.localizedDescription)"])
        }
        let lines = Self.lines(data)
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                bootstrapServers: configuration.kafka.brokers,
                properties: Worker.producerProperties(configuration.kafka.properties)
            ),
            logger: logger
        )
        let topic = urgent ? configuration.kafka.urgentJobsTopic : configuration.kafka.jobsTopic
        let acknowledged = Atomic<Int>(0)
        let failed = Atomic<Int>(0)
        let started = ContinuousClock.now
        let total = lines.count
        let progress = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                if !quiet { Self.printProgress(acknowledged.load(ordering: .relaxed), total, started) }
            }
        }
        for line in lines {
            let key = Self.jobID(line).map { Array($0.utf8) }
            while true {
                do throws(KafkaError) {
                    try producer.send(topic: topic, key: key, value: line) { result in
                        switch result {
                        case .success: acknowledged.wrappingAdd(1, ordering: .relaxed)
                        case .failure(let error):
                            failed.wrappingAdd(1, ordering: .relaxed)
                            logger.error("record not acknowledged", metadata: ["error": "\(error)"])
                        }
                    }
                    break
                } catch  where error.code == .queueFull {
                    await producer.waitForQueueRoom()
                } catch {
                    failed.wrappingAdd(1, ordering: .relaxed)
                    logger.error("record not enqueued", metadata: ["error": "\(error)"])
                    break
                }
            }
        }
        do {
            try await producer.flush(timeout: .seconds(120))
        } catch {
            logger.error("flush: \(error)")
        }
        progress.cancel()
        await producer.close(timeout: .seconds(5))
        let done = acknowledged.load(ordering: .relaxed)
        if !quiet { Self.printProgress(done, total, started, final: true) }
        if done != total {
            var standardError = StandardError()
            print(
                "enqueue: \(total - done) of \(total) records not acknowledged (\(failed.load(ordering: .relaxed)) failed)",
                to: &standardError
            )
            throw ExitCode(1)
        }
    }

    static func lines(_ data: Data) -> [[UInt8]] {
        var result: [[UInt8]] = []
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var start = 0
            for index in 0...bytes.count {
                if index == bytes.count || bytes[index] == 0x0A {
                    var end = index
                    if end > start, bytes[end - 1] == 0x0D { end -= 1 }
                    if end > start {
                        let line = Array(bytes[start..<end])
                        if line.contains(where: { $0 != 0x20 && $0 != 0x09 }) { result.append(line) }
                    }
                    start = index + 1
                }
            }
        }
        return result
    }

    /// The job's `id` for the record key, when the line is an object with a string id.
    static func jobID(_ line: [UInt8]) -> String? {
        line.withUnsafeBufferPointer { buffer in
            guard let members = try? JSONScanner.members(buffer),
                let value = members.first(where: { $0.key == "id" })?.value, value.kind == .string
            else { return nil }
            return try? JSONScanner.string(buffer, value)
        }
    }

    static func printProgress(_ done: Int, _ total: Int, _ started: ContinuousClock.Instant, final: Bool = false) {
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = seconds > 0 ? Int(Double(done) / seconds) : 0
        var standardError = StandardError()
        let terminal = isatty(STDERR_FILENO) != 0
        print(
            "\(final ? "enqueued" : "enqueuing") \(done)/\(total) records, \(rate) records/s",
            terminator: final || !terminal ? "\n" : "\r",
            to: &standardError
        )
    }
}
