import PushlineAPNSCore

/// The broadcast channels the mock knows, per app (bundle id), as APNs keeps them per app and
/// environment: at most `maxChannels` each, a storage policy fixed at creation, deletion for good.
///
/// A pure value: `MockShared` keeps one under a lock; tests drive it with no server.
struct MockChannelStore: Sendable {
    /// The most channels one app may have (Apple: 10,000); creating one more is refused.
    let maxChannels: Int
    private var apps: [String: App] = [:]
    private var random: SplitMix64

    /// One app's channels in creation order, and their policies.
    private struct App {
        var order: [String] = []
        var policies: [String: APNSChannelStoragePolicy] = [:]
    }

    init(maxChannels: Int, seed: UInt64) {
        self.maxChannels = maxChannels
        self.random = SplitMix64(seed: seed)
    }

    /// Creates a channel of `bundleID` with `policy`: its new id, or 400 CannotCreateChannelConfig
    /// when the app has `maxChannels` already.
    mutating func create(bundleID: String, policy: APNSChannelStoragePolicy) -> Result<String, APNSRequestRules.Rejection> {
        var app = apps[bundleID] ?? App()
        guard app.order.count < maxChannels else { return .failure(.init(400, .cannotCreateChannelConfig)) }
        var id = makeID()
        while app.policies[id] != nil { id = makeID() }
        app.order.append(id)
        app.policies[id] = policy
        apps[bundleID] = app
        return .success(id)
    }

    /// The policy of channel `channelID` of `bundleID`; nil when the app has no such channel.
    func policy(bundleID: String, channelID: String) -> APNSChannelStoragePolicy? {
        apps[bundleID]?.policies[channelID]
    }

    /// Deletes the channel; false when the app has no such channel.
    mutating func delete(bundleID: String, channelID: String) -> Bool {
        guard apps[bundleID]?.policies.removeValue(forKey: channelID) != nil else { return false }
        apps[bundleID]?.order.removeAll { $0 == channelID }
        return true
    }

    /// The app's channel ids, oldest first.
    func channels(bundleID: String) -> [String] {
        apps[bundleID]?.order ?? []
    }

    /// Channels over all apps.
    var count: Int { apps.values.reduce(0) { $0 + $1.order.count } }

    /// A new id: 16 random bytes in standard, padded base64, as Apple's ids look.
    private mutating func makeID() -> String {
        var bytes: [UInt8] = []
        for _ in 0..<2 {
            withUnsafeBytes(of: random.next().littleEndian) { bytes.append(contentsOf: $0) }
        }
        var text = String(Base64URL.encode(bytes).map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        while text.utf8.count % 4 != 0 { text += "=" }
        return text
    }
}
