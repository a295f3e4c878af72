import Foundation
import Metrics
import Synchronization

/// Turns librdkafka's consumer statistics JSON into `pushline_consumer_lag{topic,partition}`.
final class ConsumerLagReporter: Sendable {
    private let gauges = Mutex<[String: Gauge]>([:])

    init() {}

    /// Called on the consumer's poll thread every `statistics.interval.ms`.
    func update(_ json: String) {
        for (topic, partition, lag) in Self.lags(json) {
            let key = "\(topic)/\(partition)"
            let gauge = gauges.withLock { cache in
                if let gauge = cache[key] { return gauge }
                let gauge = Gauge(label: "pushline_consumer_lag", dimensions: [("topic", topic), ("partition", String(partition))])
                cache[key] = gauge
                return gauge
            }
            gauge.record(lag)
        }
    }

    /// (topic, partition, consumer_lag) for every assigned partition in the statistics.
    static func lags(_ json: String) -> [(String, Int, Int)] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
            let topics = object["topics"] as? [String: Any]
        else { return [] }
        var result: [(String, Int, Int)] = []
        for (topic, value) in topics {
            guard let partitions = (value as? [String: Any])?["partitions"] as? [String: Any] else { continue }
            for (key, partitionValue) in partitions {
                guard let partition = Int(key), partition >= 0,
                    let fields = partitionValue as? [String: Any],
                    let lag = fields["consumer_lag"] as? Int
                else { continue }
                // -1: not assigned here (any more); report 0 so a moved partition is not counted twice.
                result.append((topic, partition, max(0, lag)))
            }
        }
        return result
    }
}
