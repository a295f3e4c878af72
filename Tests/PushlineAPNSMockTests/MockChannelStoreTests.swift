import PushlineAPNSCore
import Testing

@testable import PushlineAPNSMock

/// The mock's channel state as a value: per-app channels, the channel limit, policies fixed at
/// creation, deletion for good. Expected answers are written out here (Apple's table), not read
/// from the code under test.
@Suite struct MockChannelStoreTests {
    @Test func eachAppHasItsOwnChannelsUpToTheLimit() {
        var store = MockChannelStore(maxChannels: 2, seed: 7)
        guard case .success(let first) = store.create(bundleID: "com.a", policy: .noStorage),
            case .success(let second) = store.create(bundleID: "com.a", policy: .mostRecentMessage)
        else {
            Issue.record("two channels under a limit of two")
            return
        }
        #expect(first != second)
        let third = store.create(bundleID: "com.a", policy: .noStorage)
        #expect(third == .failure(.init(400, APNSReason(rawValue: "CannotCreateChannelConfig"))))
        // Another app's limit is its own.
        let other = try? store.create(bundleID: "com.b", policy: .noStorage).get()
        #expect(other != nil)
        #expect(store.channels(bundleID: "com.a") == [first, second])
        #expect(store.count == 3)
        #expect(store.policy(bundleID: "com.a", channelID: first) == .noStorage)
        #expect(store.policy(bundleID: "com.a", channelID: second) == .mostRecentMessage)
        #expect(store.policy(bundleID: "com.b", channelID: first) == nil, "a channel belongs to its app")
    }

    @Test func deletingIsForGoodAndFreesRoom() {
        var store = MockChannelStore(maxChannels: 1, seed: 7)
        let id = try? store.create(bundleID: "com.a", policy: .mostRecentMessage).get()
        guard let id else {
            Issue.record("no channel")
            return
        }
        let wrongApp = store.delete(bundleID: "com.b", channelID: id)
        let first = store.delete(bundleID: "com.a", channelID: id)
        let second = store.delete(bundleID: "com.a", channelID: id)
        #expect(!wrongApp && first && !second)
        #expect(store.policy(bundleID: "com.a", channelID: id) == nil)
        #expect(store.channels(bundleID: "com.a").isEmpty)
        let again = try? store.create(bundleID: "com.a", policy: .noStorage).get()
        #expect(again != nil, "room again after the delete")
    }

    @Test func idsLookLikeApplesPaddedBase64() {
        var store = MockChannelStore(maxChannels: 100, seed: 1)
        var seen: Set<String> = []
        for _ in 0..<100 {
            guard case .success(let id) = store.create(bundleID: "com.a", policy: .noStorage) else {
                Issue.record("refused under the limit")
                return
            }
            #expect(id.utf8.count == 24 && id.hasSuffix("=="), "16 bytes in base64: \(id)")
            #expect(id.allSatisfy { $0.isLetter || $0.isNumber || "+/=".contains($0) }, "\(id)")
            seen.insert(id)
        }
        #expect(seen.count == 100)
    }
}
