import PushlineAPNSCore
import Testing

/// The push-type table against Apple's documentation, written out here by hand (Apple's
/// "Sending notification requests to APNs"), not derived from the
/// table it checks.
@Suite struct APNSPushTypeTests {
    static let applesTopics: [String: String] = [
        "alert": "com.example.app",
        "background": "com.example.app",
        "voip": "com.example.app.voip",
        "complication": "com.example.app.complication",
        "fileprovider": "com.example.app.pushkit.fileprovider",
        "mdm": "com.example.app",
        "location": "com.example.app.location-query",
        "liveactivity": "com.example.app.push-type.liveactivity",
        "pushtotalk": "com.example.app.voip-ptt",
        "widgets": "com.example.app.push-type.widgets",
        "controls": "com.example.app.push-type.controls",
    ]

    @Test func elevenPushTypesWithApplesTopics() {
        #expect(Set(APNSPushType.allCases.map(\.rawValue)) == Set(Self.applesTopics.keys))
        for type in APNSPushType.allCases {
            #expect(type.defaultTopic(bundleID: "com.example.app") == Self.applesTopics[type.rawValue], "\(type)")
        }
    }

    @Test func backgroundPushesAreNeverSentAtPriorityTen() {
        #expect(APNSPushType.background.defaultPriority == .powerConsiderate)
        #expect(!APNSPushType.background.allows(.immediate))
        #expect(APNSPushType.background.allows(.powerConsiderate))
        #expect(APNSPushType.background.allows(.low))
        for type in APNSPushType.allCases where type != .background {
            #expect(type.defaultPriority == .immediate, "\(type)")
            #expect(type.allows(.immediate), "\(type)")
        }
    }

    @Test func voipPayloadsMayBeLarger() {
        #expect(APNSPushType.voip.maxPayloadBytes == 5120)
        #expect(APNSPushType.widgets.maxPayloadBytes == 4096)
    }
}
