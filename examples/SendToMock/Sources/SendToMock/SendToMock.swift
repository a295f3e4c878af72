import Foundation
import PushlineAPNS
import PushlineAPNSCore
import PushlineAPNSMock

/// Starts Pushline's APNs emulator in this process on a free loopback port, sends it one
/// notification with Pushline's client (token auth, TLS, HTTP/2), and returns APNs' answer with
/// the mock's own count of the requests it answered 200.
public func sendOneNotificationToAMock(token: String, workDirectory: String) async throws -> (APNSOutcome, answered200: Int) {
    let key = try MockConfiguration.AuthKey.generate(
        keyID: "ABC123DEFG",
        teamID: "DEF123GHIJ",
        privateKeyFile: workDirectory + "/AuthKey.p8"
    )
    var mockConfiguration = MockConfiguration()
    mockConfiguration.port = 0
    mockConfiguration.authKeys[key.keyID] = key
    let identity = try SelfSignedIdentity.generate(into: workDirectory + "/tls", host: "127.0.0.1")
    let mock = try await MockAPNSServer.start(mockConfiguration, identity: identity)

    let client = try APNSClient(
        configuration: APNSClientConfiguration(
            endpoint: APNSEndpoint(host: "127.0.0.1", port: mock.port),
            caFile: workDirectory + "/tls/ca.pem"
        ),
        credential: .token(keyFile: workDirectory + "/AuthKey.p8", keyID: key.keyID, teamID: key.teamID)
    )
    client.start()
    let notification = APNSNotification(
        deviceToken: token,
        topic: "com.example.app",
        apnsID: UUID().uuidString.lowercased(),
        payload: Array(#"{"aps":{"alert":"Hello from SendToMock"}}"#.utf8)
    )
    let outcome = await client.send(notification)
    await client.shutdown()
    let answered = mock.stats.snapshot().byStatus[200] ?? 0
    try await mock.shutdown()
    return (outcome, answered)
}
