import Foundation
import Metrics
import Synchronization

/// Turns librdkafka's consumer statistics into `pushline_consumer_lag{topic,partition}`.
///
/// The lag is the high watermark minus the group's committed offset as librdkafka last learned
/// it from the broker (`GroupStatistics`), not librdkafka's `consumer_lag`, which is -1 while
/// nothing is committed: a reassigned partition whose offsets the group never committed read 0
/// (issue 27). Partitions not assigned here read 0, so a moved partition is not counted twice.
final class ConsumerLagReporter: Sendable {
    private let gauges = Mutex<[String: Gauge]>([:])

    init() {}

    /// Called on the consumer's poll thread every `statistics.interval.ms`.
    func update(_ statistics: GroupStatistics) {
        for partition in statistics.partitions {
            let key = "\(partition.topic)/\(partition.partition)"
            let gauge = gauges.withLock { cache in
                if let gauge = cache[key] { return gauge }
                let gauge = Gauge(
                    label: "pushline_consumer_lag",
                    dimensions: [("topic", partition.topic), ("partition", String(partition.partition))]
                )
                cache[key] = gauge
                return gauge
            }
            gauge.record(partition.lag)
        }
    }
}
