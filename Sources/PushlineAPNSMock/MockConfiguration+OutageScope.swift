extension MockConfiguration {
    /// What is wrong with the outage's scope (`outageTopic`, `outageKeyID`), one line per problem
    /// naming its flag; empty when nothing is. `MockAPNSServer.start` refuses a configuration
    /// with problems, and `pushline mock-apns` reports them with the other flags'.
    public var outageScopeProblems: [String] {
        var problems: [String] = []
        if let outageTopic {
            if outageTopic.isEmpty {
                problems.append("--outage-topic: empty; give the apns-topic of the app to refuse, e.g. com.example.app")
            } else if !Self.isTopic(outageTopic) {
                problems.append(
                    "--outage-topic: '\(outageTopic)' is not an apns-topic (letters, digits, '-' and '_' between dots, e.g. com.example.app)"
                )
            }
        }
        if let outageKeyID {
            if outageKeyID.isEmpty {
                problems.append("--outage-key-id: empty; give the key id (kid) of one --auth-key")
            } else if !tokenAuth {
                problems.append("--outage-key-id: '\(outageKeyID)' needs token auth (--auth-key KID:TEAM:PUBKEY.pem)")
            } else if authKeys[outageKeyID] == nil {
                problems.append(
                    "--outage-key-id: '\(outageKeyID)' is not the key id of any --auth-key (known: \(authKeys.keys.sorted().joined(separator: ", ")))"
                )
            }
        }
        if outageTopic != nil || outageKeyID != nil, MockOutage(self) == nil {
            problems.append(
                "--outage-topic, --outage-key-id: they limit an outage, and there is none (give --outage STATUS:REASON:SECONDS)"
            )
        }
        return problems
    }

    /// Dot-separated labels of letters, digits, '-' and '_', none empty: a bundle id, or one with a
    /// push type's suffix (`.voip`, `.push-type.liveactivity`).
    private static func isTopic(_ text: String) -> Bool {
        text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty
                && label.utf8.allSatisfy { byte in
                    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                        || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
                        || byte == UInt8(ascii: "_")
                }
        }
    }
}
