import Foundation
import PushlineTLS
import PushlineTestSupport
import Testing

@Suite struct ES256Tests {
    let message = Array(#"eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyMzQ1NjcifQ.eyJpc3MiOiJERUYxMjM0NTY3IiwiaWF0IjoxNzAwMDAwMDAwfQ"#.utf8)

    @Test func signVerifyRoundTrip() throws {
        let key = try PrivateKey.generateP256()
        let publicKey = try PublicKey(pemBytes: Array(key.publicKeyPEM().utf8))
        let signature = try ES256.sign(message, with: key)
        #expect(signature.count == 64)
        #expect(try ES256.verify(signature, of: message, with: publicKey))

        var tamperedMessage = message
        tamperedMessage[3] ^= 0x01
        #expect(try !ES256.verify(signature, of: tamperedMessage, with: publicKey))
        var tamperedSignature = signature
        tamperedSignature[40] ^= 0x80
        #expect(try !ES256.verify(tamperedSignature, of: message, with: publicKey))
        #expect(try !ES256.verify(Array(signature.prefix(63)), of: message, with: publicKey))
        let otherKey = try PrivateKey.generateP256().publicKey()
        #expect(try !ES256.verify(signature, of: message, with: otherKey))
    }

    @Test func p8RoundTripsThroughPEM() throws {
        let key = try PrivateKey.generateP256()
        let pem = try key.pkcs8PEM()
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let reloaded = try PrivateKey(pemBytes: Array(pem.utf8))
        #expect(reloaded.isP256)
        let signature = try ES256.sign(message, with: reloaded)
        #expect(try ES256.verify(signature, of: message, with: key.publicKey()))
    }

    @Test func nonP256KeyIsRefused() throws {
        let generated = try runOpenSSLCLI(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"])
        try #require(generated.status == 0, "\(generated.output)")
        let key = try PrivateKey(pemBytes: Array(generated.output.utf8))
        #expect(!key.isP256)
        #expect(throws: CryptoError.self) { _ = try ES256.sign(message, with: key) }
    }

    /// Independent cross-check both ways with the openssl CLI: it verifies our signature (raw -> DER),
    /// and we verify its signature (DER -> raw).
    @Test func crossCheckWithOpenSSLCLI() throws {
        let directory = try ProjectPaths.temporaryDirectory("es256")
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        let key = try PrivateKey.generateP256()
        try key.writePEM(to: path("AuthKey.p8"))
        try key.publicKeyPEM().write(toFile: path("public.pem"), atomically: true, encoding: .utf8)
        try Data(message).write(to: URL(fileURLWithPath: path("message")))

        let ours = try ES256.sign(message, with: key)
        try Data(ES256.derSignature(fromRaw: ours)).write(to: URL(fileURLWithPath: path("ours.der")))
        let verified = try runOpenSSLCLI([
            "dgst", "-sha256", "-verify", path("public.pem"), "-signature", path("ours.der"), path("message"),
        ])
        #expect(verified.status == 0, "\(verified.output)")
        #expect(verified.output.contains("Verified OK"))

        let signed = try runOpenSSLCLI(["dgst", "-sha256", "-sign", path("AuthKey.p8"), "-out", path("theirs.der"), path("message")])
        #expect(signed.status == 0, "\(signed.output)")
        let theirs = try ES256.rawSignature(fromDER: Array(Data(contentsOf: URL(fileURLWithPath: path("theirs.der")))))
        #expect(theirs.count == 64)
        #expect(try ES256.verify(theirs, of: message, with: PublicKey(pemFile: path("public.pem"))))
    }
}
