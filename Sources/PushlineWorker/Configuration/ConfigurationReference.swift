import Foundation

/// The key tables of docs/configuration.md, generated from `ConfigurationKeys` (a test keeps the
/// document in step: `PUSHLINE_UPDATE_DOCS=1 swift test --filter ConfigurationReferenceTests`
/// rewrites it).
enum ConfigurationReference {
    /// The line that opens the generated table of `section` in the document.
    static func openingMarker(_ section: String) -> String {
        "<!-- generated from ConfigurationKeys: \(section) -->"
    }

    static let closingMarker = "<!-- end of generated table -->"

    /// The sections with a generated table.
    static var sections: [String] {
        ConfigurationKeys.sections
    }

    /// The Markdown table of `section`'s keys.
    static func table(_ section: String) -> String {
        var rows = [
            "| key | default | variable | values | what it does | when to change it |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        if section == "apps" {
            let defaults = PushlineConfiguration.App()
            for key in ConfigurationKeys.app {
                let variable = "APPS_<NAME>_" + ConfigurationKeys.AppKey.environmentName(key.name)
                rows.append(row(key, name: key.name, value: key.value(in: defaults), variable: variable))
            }
        } else {
            let defaults = PushlineConfiguration()
            for key in ConfigurationKeys.global where key.section == section {
                rows.append(
                    row(
                        key,
                        name: key.nameInSection,
                        value: key.value(in: defaults),
                        variable: ConfigurationKeys.Key.environmentName(key.name)
                    )
                )
            }
            if section == "kafka" {
                rows.append(
                    "| `properties` | `{}` | `KAFKA_PROPERTY_<NAME>` per property | a mapping | librdkafka properties, passed as-is to the "
                        + "consumer and the producer (`security.protocol`, `sasl.*`, `ssl.*`, timeouts, `client.id`) | for TLS/SASL, client ids, tuning |"
                )
            }
        }
        return rows.joined(separator: "\n")
    }

    /// `document` with every generated table replaced by the current one.
    static func updating(_ document: String) -> String {
        var text = document
        for section in sections {
            let opening = openingMarker(section)
            guard let start = text.range(of: opening),
                let end = text.range(of: closingMarker, range: start.upperBound..<text.endIndex)
            else { continue }
            text.replaceSubrange(start.upperBound..<end.lowerBound, with: "\n" + table(section) + "\n")
        }
        return text
    }

    private static func row<Root>(_ key: ConfigurationKey<Root>, name: String, value: ConfigurationValue, variable: String) -> String {
        var required = false
        if case .nonEmpty = key.rule, value == .string("") { required = true }
        let shownDefault = required ? "— (required)" : value.documented
        let values = key.rule.documented ?? "any"
        var summary = key.summary
        if key.isSecret {
            summary += "; secret: `--print-config` shows `<redacted>`"
        }
        return "| `\(name)` | \(shownDefault) | `\(variable)` | \(values) | \(summary) | \(key.advice) |"
    }
}
