extension PushlineConfiguration {
    /// The effective configuration as YAML, for `pushline run --print-config`. Secret values
    /// (Kafka properties that hold passwords, secrets or keys) are shown as `<redacted>`; key files
    /// are paths, and the PKCS#12 password is only named by its environment variable.
    public func renderedYAML() -> String {
        var lines: [String] = []
        func quoted(_ value: String) -> String {
            var escaped = ""
            for character in value {
                switch character {
                case "\"": escaped += "\\\""
                case "\\": escaped += "\\\\"
                case "\n": escaped += "\\n"
                default: escaped.append(character)
                }
            }
            return "\"" + escaped + "\""
        }
        lines.append("kafka:")
        lines.append("  brokers: \(quoted(kafka.brokers))")
        lines.append("  group_id: \(quoted(kafka.groupID))")
        lines.append("  jobs_topic: \(quoted(kafka.jobsTopic))")
        lines.append("  results_topic: \(quoted(kafka.resultsTopic))")
        lines.append("  invalidations_topic: \(quoted(kafka.invalidationsTopic))")
        lines.append("  dead_letter_topic: \(quoted(kafka.deadLetterTopic))")
        if kafka.properties.isEmpty {
            lines.append("  properties: {}")
        } else {
            lines.append("  properties:")
            for (key, value) in kafka.properties.sorted(by: { $0.key < $1.key }) {
                let shown = Self.isSecretProperty(key) ? "<redacted>" : value
                lines.append("    \(quoted(key)): \(quoted(shown))")
            }
        }
        lines.append("apns:")
        lines.append("  endpoint: \(quoted(apns.endpoint))")
        lines.append("  ca_file: \(quoted(apns.caFile))")
        lines.append("  connections: \(apns.connections)")
        lines.append("  max_streams_per_connection: \(apns.maxStreamsPerConnection)")
        lines.append("  request_timeout_ms: \(apns.requestTimeoutMilliseconds)")
        lines.append("  max_attempts: \(apns.maxAttempts)")
        lines.append("  hold_min_systemic: \(apns.holdMinimumSystemic)")
        lines.append("  hold_percent: \(apns.holdPercent)")
        lines.append("  hold_limit_ms: \(apns.holdLimitMilliseconds)")
        lines.append("apps:")
        for (name, app) in apps.sorted(by: { $0.key < $1.key }) {
            lines.append("  \(quoted(name)):")
            lines.append("    bundle_id: \(quoted(app.bundleID))")
            lines.append("    endpoint: \(quoted(app.endpoint))")
            lines.append("    auth:")
            switch app.auth {
            case .token(let keyFile, let keyID, let teamID):
                lines.append("      type: \"token\"")
                lines.append("      key_file: \(quoted(keyFile))")
                lines.append("      key_id: \(quoted(keyID))")
                lines.append("      team_id: \(quoted(teamID))")
            case .certificatePEM(let certFile, let keyFile):
                lines.append("      type: \"certificate\"")
                lines.append("      cert_file: \(quoted(certFile))")
                lines.append("      key_file: \(quoted(keyFile))")
            case .certificatePKCS12(let p12File, let variable):
                lines.append("      type: \"certificate\"")
                lines.append("      p12_file: \(quoted(p12File))")
                lines.append("      p12_password_env: \(quoted(variable))")
            }
        }
        lines.append("worker:")
        lines.append("  max_inflight: \(worker.maxInflight)")
        lines.append("  shutdown_timeout_ms: \(worker.shutdownTimeoutMilliseconds)")
        lines.append("  invalidate_on: [\(worker.invalidateOn.map(quoted).joined(separator: ", "))]")
        lines.append("  max_job_bytes: \(worker.maxJobBytes)")
        lines.append("  allow_insecure_key_files: \(worker.allowInsecureKeyFiles)")
        lines.append("metrics:")
        lines.append("  listen: \(quoted(metrics.listen))")
        lines.append("log:")
        lines.append("  level: \(quoted(log.level))")
        lines.append("  format: \(quoted(log.format))")
        return lines.joined(separator: "\n") + "\n"
    }

    /// librdkafka properties whose values are secrets.
    static func isSecretProperty(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return ["password", "secret", "key.pem", "token", "jaas"].contains { lowered.contains($0) }
    }
}
