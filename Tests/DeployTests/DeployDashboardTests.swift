import Foundation
import Testing

/// The Grafana dashboard queries only metrics the worker exposes, and shows all of them.
@Suite struct DeployDashboardTests {
    /// The worker's Prometheus metrics (the names the Pushline module registers).
    static let metrics: Set<String> = [
        "pushline_notifications_total", "pushline_invalidations_total", "pushline_rejected_jobs_total",
        "pushline_retries_total", "pushline_end_to_end_latency_seconds", "pushline_apns_latency_seconds",
        "pushline_inflight_notifications", "pushline_paused_partitions", "pushline_apns_connections",
        "pushline_apns_stream_limit", "pushline_apns_open_streams", "pushline_apns_queue_depth",
        "pushline_jwt_refreshes_total", "pushline_consumer_lag", "pushline_producer_queue_depth",
        "pushline_jobs_total", "pushline_app_held", "pushline_apns_held_requests_total",
        // Apps kept apart (AppWindowMetrics).
        "pushline_app_inflight", "pushline_app_parking", "pushline_app_parked_jobs", "pushline_app_parked_total",
        "pushline_app_unparked_total",
    ]
    static let histograms: Set<String> = ["pushline_end_to_end_latency_seconds", "pushline_apns_latency_seconds"]

    /// The metric a series name belongs to (histogram series carry _bucket, _sum, _count).
    static func metric(ofSeries series: String) -> String {
        for suffix in ["_bucket", "_sum", "_count"] where series.hasSuffix(suffix) {
            let base = String(series.dropLast(suffix.count))
            if histograms.contains(base) { return base }
        }
        return series
    }

    /// `pushline_*` identifiers in a PromQL expression.
    static func seriesNames(in expression: String) -> [String] {
        var names: [String] = []
        var current = ""
        for character in expression + " " {
            if character.isLetter || character.isNumber || character == "_" || character == ":" {
                current.append(character)
            } else {
                if current.hasPrefix("pushline_") { names.append(current) }
                current = ""
            }
        }
        return names
    }

    /// Every `expr` in the panels (rows included) and every templating query.
    static func expressions(in dashboard: [String: Any]) -> [String] {
        var found: [String] = []
        func panels(_ list: [[String: Any]]) {
            for panel in list {
                for target in panel["targets"] as? [[String: Any]] ?? [] {
                    if let expression = target["expr"] as? String { found.append(expression) }
                }
                panels(panel["panels"] as? [[String: Any]] ?? [])
            }
        }
        panels(dashboard["panels"] as? [[String: Any]] ?? [])
        let templating = (dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
        for variable in templating where variable["type"] as? String == "query" {
            if let query = variable["query"] as? String { found.append(query) }
            if let query = (variable["query"] as? [String: Any])?["query"] as? String { found.append(query) }
        }
        return found
    }

    let dashboard: [String: Any]

    init() throws {
        let data = try Data(contentsOf: DeployFiles.url("grafana/pushline-dashboard.json"))
        dashboard = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func hasPanelsWithQueries() {
        let panels = dashboard["panels"] as? [[String: Any]] ?? []
        #expect(panels.count >= 10)
        #expect(Self.expressions(in: dashboard).count >= 17)
    }

    @Test func queriesOnlyKnownMetrics() {
        for expression in Self.expressions(in: dashboard) {
            let names = Self.seriesNames(in: expression)
            #expect(!names.isEmpty, "query with no Pushline metric: \(expression)")
            for name in names {
                #expect(Self.metrics.contains(Self.metric(ofSeries: name)), "unknown metric \(name) in \(expression)")
            }
        }
    }

    @Test func showsEveryMetric() {
        let used = Set(Self.expressions(in: dashboard).flatMap(Self.seriesNames).map(Self.metric(ofSeries:)))
        #expect(Self.metrics.subtracting(used) == [])
    }

    /// The list above names metrics the worker registers: each is a string literal in Sources (a
    /// renamed metric fails here, not on an empty panel).
    @Test func everyListedMetricIsRegisteredInSources() throws {
        let sources = DeployFiles.root.appendingPathComponent("Sources")
        let walker = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var text = ""
        for case let url as URL in walker where url.pathExtension == "swift" {
            text += try String(contentsOf: url, encoding: .utf8)
        }
        for metric in Self.metrics.sorted() {
            let registered = text.contains("\"\(metric)\"")
            #expect(registered, "\(metric) is not registered anywhere in Sources")
        }
    }

    @Test func quantilesComeFromHistogramBuckets() {
        for expression in Self.expressions(in: dashboard) where expression.contains("histogram_quantile") {
            let names = Self.seriesNames(in: expression)
            #expect(names.allSatisfy { $0.hasSuffix("_bucket") && Self.histograms.contains(Self.metric(ofSeries: $0)) }, "\(expression)")
            #expect(expression.contains("by (le)"), "\(expression)")
        }
    }

    @Test func theNameCheckRejectsStrangers() {
        #expect(Self.seriesNames(in: "rate(pushline_notification_total[5m])") == ["pushline_notification_total"])
        #expect(!Self.metrics.contains(Self.metric(ofSeries: "pushline_notification_total")))
        #expect(Self.metric(ofSeries: "pushline_jobs_total_count") == "pushline_jobs_total_count")
        #expect(Self.metric(ofSeries: "pushline_apns_latency_seconds_bucket") == "pushline_apns_latency_seconds")
    }
}
