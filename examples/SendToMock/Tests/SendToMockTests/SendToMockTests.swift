import Foundation
import PushlineAPNSCore
import PushlineAPNSMock
import SendToMock
import Testing

@Suite struct SendToMockTests {
    func workDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("send-to-mock-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func aNotificationToAGoodTokenIsAccepted() async throws {
        let directory = try workDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (outcome, answered200) = try await sendOneNotificationToAMock(
            token: String(repeating: "ab", count: 32),
            workDirectory: directory
        )
        #expect(outcome.status == 200)
        #expect(outcome.attempts == 1)
        #expect(answered200 == 1, "the mock answered the one request")
    }

    @Test func aMalformedTokenIsAnsweredAsAPNsWould() async throws {
        let directory = try workDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (outcome, answered200) = try await sendOneNotificationToAMock(token: "not-a-token", workDirectory: directory)
        #expect(outcome.status == 400)
        #expect(outcome.response?.reason == .badDeviceToken)
        #expect(answered200 == 0)
    }
}
