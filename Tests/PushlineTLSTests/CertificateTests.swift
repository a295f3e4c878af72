import Foundation
import PushlineTLS
import PushlineTestCA
import Testing

@Suite struct CertificateTests {
    @Test func generatedChainVerifiesWithOpenSSLCLI() throws {
        let pki = try TestPKI()
        defer { pki.removeFiles() }
        // server.pem holds the leaf then the CA; `openssl verify` checks the first certificate.
        for (file, purpose) in [(pki.serverCertificateFile, "sslserver"), (pki.clientCertificateFile, "sslclient")] {
            let result = try runOpenSSLCLI(["verify", "-CAfile", pki.caFile, "-purpose", purpose, file])
            #expect(result.status == 0, "openssl verify \(file): \(result.output)")
            #expect(result.output.contains(": OK"))
        }
        // A different CA must not verify it.
        let other = try CertificateAuthority.create()
        let otherFile = pki.path("other-ca.pem")
        try other.certificate.pem().write(toFile: otherFile, atomically: true, encoding: .utf8)
        let rejected = try runOpenSSLCLI(["verify", "-CAfile", otherFile, pki.serverCertificateFile])
        #expect(rejected.status != 0)
    }

    @Test func serverCertificateCarriesSANs() throws {
        let ca = try CertificateAuthority.create()
        let server = try ca.issueServerCertificate(dnsNames: ["localhost", "mock.apns.test"], ipAddresses: ["127.0.0.1", "::1"])
        #expect(server.certificate.dnsNames == ["localhost", "mock.apns.test"])
        #expect(server.certificate.ipAddresses == ["127.0.0.1", "0:0:0:0:0:0:0:1"])
        #expect(server.certificate.issuer == ca.certificate.subject)
        #expect(server.certificate.subject.commonName == "localhost")
    }

    @Test func clientCertificateSubjectRoundTripsThroughPEM() throws {
        let ca = try CertificateAuthority.create()
        let client = try ca.issueClientCertificate(subject: TestPKI.clientSubject)
        let parsed = try X509Certificate(pemBytes: Array(client.certificate.pem().utf8))
        #expect(parsed.subject == TestPKI.clientSubject)
        #expect(parsed.subject.userID == "com.example.app")
        #expect(parsed.subject.commonName == "Apple Push Services: com.example.app")
        #expect(parsed.subject["OU"] == "TEAM123456")
        #expect(try parsed.der() == client.certificate.der())
    }

    @Test func pkcs12RoundTripsAndRejectsWrongPassword() throws {
        let ca = try CertificateAuthority.create()
        let client = try ca.issueClientCertificate(subject: TestPKI.clientSubject)
        let p12 = try client.pkcs12(password: "pw", friendlyName: "Apple Push Services")
        let loaded = try CertifiedKey(pkcs12: p12, password: "pw")
        #expect(try loaded.certificate.der() == client.certificate.der())
        #expect(try loaded.privateKey.publicKeyPEM() == client.privateKey.publicKeyPEM())
        #expect(loaded.chain.count == 1)
        #expect(loaded.chain.first?.subject == ca.certificate.subject)
        do {
            _ = try CertifiedKey(pkcs12: p12, password: "wrong")
            Issue.record("a wrong password must fail")
        } catch let error as CryptoError {
            #expect(error.code == .wrongPassword)
        }
    }

    @Test func pkcs12IsReadableByOpenSSLCLI() throws {
        let pki = try TestPKI()
        defer { pki.removeFiles() }
        let result = try runOpenSSLCLI([
            "pkcs12", "-in", pki.clientPKCS12File, "-passin", "pass:\(TestPKI.p12Password)", "-nokeys", "-clcerts",
        ])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("UID = com.example.app") || result.output.contains("UID=com.example.app"))
    }

    @Test func missingFileErrorNamesTheFile() throws {
        do {
            _ = try X509Certificate.certificates(pemFile: "/nonexistent/ca.pem")
            Issue.record("expected an error")
        } catch let error as CryptoError {
            #expect(error.code == .fileAccess)
            #expect(error.message.contains("'/nonexistent/ca.pem'"))
            #expect(error.message.contains("No such file"))
        }
    }

    @Test func contextReportsEveryConfigurationProblemAtOnce() throws {
        var configuration = TLSConfiguration.server(
            identity: .pemFiles(certificateChain: "/nonexistent/server.pem", privateKey: "/nonexistent/server.key", password: nil),
            clientCertificateVerification: .require(.caFile("/nonexistent/ca.pem"))
        )
        configuration.alpnProtocols = ["h2", ""]
        do {
            _ = try TLSContext(configuration: configuration)
            Issue.record("expected an error")
        } catch TLSError.invalidConfiguration(let problems) {
            #expect(problems.count == 3, "\(problems)")
            #expect(problems.contains { $0.contains("/nonexistent/server.pem") })
            #expect(problems.contains { $0.contains("/nonexistent/ca.pem") })
            #expect(problems.contains { $0.contains("alpnProtocols") })
        }
    }

    @Test func keyThatDoesNotMatchCertificateIsRejected() throws {
        let ca = try CertificateAuthority.create()
        let server = try ca.issueServerCertificate(dnsNames: ["localhost"])
        let mismatched = CertifiedKey(certificate: server.certificate, privateKey: try PrivateKey.generateP256())
        #expect(throws: TLSError.self) {
            _ = try TLSContext(configuration: .server(identity: .certifiedKey(mismatched)))
        }
    }

    @Test func clientContextLoadsTheSystemTrustStore() throws {
        let context = try TLSContext(configuration: .client(serverHostname: "api.push.apple.com"))
        #expect(context.configuration.trustRoots.includeSystemStore)
        #expect(throws: Never.self) { _ = try TLSHandler(context: context) }
    }
}
