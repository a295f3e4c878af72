/// A line of `pushline-mock-kafka`'s standard input.
enum MockKafkaCommand: Equatable {
    /// `topic NAME PARTITIONS [CONFIG=VALUE]...`: the mock keeps no topic configs, so they are
    /// named back as ignored.
    case topic(name: String, partitions: Int32, ignoredConfigs: [String])
    case empty
    case unknown(String)

    init(line: Substring) {
        let words = line.split(whereSeparator: \.isWhitespace)
        guard let first = words.first else {
            self = .empty
            return
        }
        if first == "topic", words.count >= 3, let partitions = Int32(words[2]), partitions > 0,
            words.dropFirst(3).allSatisfy({ $0.contains("=") })
        {
            self = .topic(
                name: String(words[1]),
                partitions: partitions,
                ignoredConfigs: words.dropFirst(3).map { String($0.prefix { $0 != "=" }) }
            )
        } else {
            self = .unknown(line.trimmingWhitespace)
        }
    }
}

extension Substring {
    fileprivate var trimmingWhitespace: String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
