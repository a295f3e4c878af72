import Foundation

/// What the worker reads from librdkafka's consumer statistics JSON (every 5 s): the group's
/// join state and last rebalance, and each assigned partition's lag and committed offset.
struct GroupStatistics: Sendable, Equatable {
    struct Partition: Sendable, Equatable {
        var topic: String
        var partition: Int
        /// The high watermark minus the committed offset (minus the log start when the group has
        /// committed nothing there); 0 when not assigned here.
        var lag: Int
        /// The group's committed offset as librdkafka last learned it from the broker (an
        /// OffsetFetch at assign, each confirmed commit); nil when none.
        var committed: Int?
        /// Whether the partition is assigned to this member (its fetcher is not stopped).
        var assigned: Bool
    }

    /// librdkafka's join state: "steady" once the member has its assignment, "wait-join",
    /// "wait-sync", ... during a rebalance; "" when the statistics have no group.
    var joinState = ""
    /// librdkafka's coordinator state ("up" when it talks to the group coordinator).
    var state = ""
    var rebalanceCount = 0
    var rebalanceReason = ""
    /// Milliseconds since the last rebalance.
    var rebalanceAgeMilliseconds = 0
    var partitions: [Partition] = []

    var assigned: [Partition] { partitions.filter(\.assigned) }

    /// Nil when `json` is not librdkafka's statistics object.
    static func parse(_ json: String) -> GroupStatistics? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else { return nil }
        var statistics = GroupStatistics()
        if let group = object["cgrp"] as? [String: Any] {
            statistics.joinState = group["join_state"] as? String ?? ""
            statistics.state = group["state"] as? String ?? ""
            statistics.rebalanceCount = group["rebalance_cnt"] as? Int ?? 0
            statistics.rebalanceReason = group["rebalance_reason"] as? String ?? ""
            statistics.rebalanceAgeMilliseconds = group["rebalance_age"] as? Int ?? 0
        }
        for (topic, value) in object["topics"] as? [String: Any] ?? [:] {
            guard let partitions = (value as? [String: Any])?["partitions"] as? [String: Any] else { continue }
            for (key, partitionValue) in partitions {
                guard let partition = Int(key), partition >= 0, let fields = partitionValue as? [String: Any] else { continue }
                statistics.partitions.append(Self.partition(topic: topic, partition: partition, fields))
            }
        }
        statistics.partitions.sort { ($0.topic, $0.partition) < ($1.topic, $1.partition) }
        return statistics
    }

    private static func partition(topic: String, partition: Int, _ fields: [String: Any]) -> Partition {
        let state = fields["fetch_state"] as? String ?? "none"
        let assigned = state != "none" && state != "stopped" && state != "stopping"
        let committed = (fields["committed_offset"] as? Int).flatMap { $0 >= 0 ? $0 : nil }
        var lag = 0
        if assigned, let high = fields["hi_offset"] as? Int, high >= 0 {
            let start = max(0, fields["lo_offset"] as? Int ?? 0)
            lag = max(0, high - (committed ?? start))
        }
        return Partition(topic: topic, partition: partition, lag: lag, committed: committed, assigned: assigned)
    }
}
