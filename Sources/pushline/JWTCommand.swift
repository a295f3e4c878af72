import ArgumentParser
import PushlineAPNS
import PushlineAPNSCore
import PushlineTLS

struct JWTCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jwt",
        abstract: "Print an APNs provider token (ES256 JWT) for use with curl, h2load or the mock.",
        discussion:
            "Example: h2load -H \"authorization: bearer $(pushline jwt --key-file AuthKey.p8 --key-id ABC123DEFG --team-id DEF123GHIJ)\" ..."
    )

    @Option(name: .long, help: "The .p8 signing key (PKCS#8 PEM, P-256).")
    var keyFile: String

    @Option(name: .long, help: "The 10-character key id.")
    var keyID: String

    @Option(name: .long, help: "The 10-character team id.")
    var teamID: String

    @Option(name: .long, help: "Issued-at time in unix seconds (default: now).")
    var issuedAt: Int64?

    func run() async throws {
        let key: PrivateKey
        do {
            key = try PrivateKey(pemFile: keyFile)
        } catch {
            throw ExitFailure.configuration(["--key-file: cannot load '\(keyFile)': \(error)"])
        }
        guard key.isP256 else {
            throw ExitFailure.configuration(["--key-file: '\(keyFile)' is not a P-256 (ES256) key"])
        }
        let token = try ProviderToken(
            keyID: keyID,
            teamID: teamID,
            issuedAt: issuedAt ?? APNSClientConfiguration.systemNow()
        ) { try ES256.sign($0, with: key) }
        print(token.jwt)
    }
}
