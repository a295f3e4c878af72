import Foundation
import PushlineTLS
import PushlineTestCA
import PushlineTestSupport

/// A CA, a server certificate for localhost/127.0.0.1 and an APNs-like client certificate,
/// written as PEM (and the client also as PKCS#12) into a fresh temporary directory.
struct TestPKI {
    static let clientSubject = DistinguishedName([
        .init("UID", "com.example.app"),
        .init("CN", "Apple Push Services: com.example.app"),
        .init("OU", "TEAM123456"),
        .init("O", "Example Inc."),
        .init("C", "US"),
    ])
    static let p12Password = "s3cret"

    let directory: URL
    let ca: CertificateAuthority
    let server: CertifiedKey
    let client: CertifiedKey

    var caFile: String { path("ca.pem") }
    var serverCertificateFile: String { path("server.pem") }
    var serverKeyFile: String { path("server.key") }
    var clientCertificateFile: String { path("client.pem") }
    var clientKeyFile: String { path("client.key") }
    var clientPKCS12File: String { path("client.p12") }

    init() throws {
        directory = try ProjectPaths.temporaryDirectory("tls-pki")
        ca = try CertificateAuthority.create()
        server = try ca.issueServerCertificate(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1", "::1"])
        client = try ca.issueClientCertificate(subject: Self.clientSubject)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try ca.certificate.pem().write(toFile: caFile, atomically: true, encoding: .utf8)
        try server.writePEM(certificatePath: serverCertificateFile, keyPath: serverKeyFile)
        try client.writePEM(certificatePath: clientCertificateFile, keyPath: clientKeyFile)
        try client.writePKCS12(to: clientPKCS12File, password: Self.p12Password)
    }

    func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }

    func removeFiles() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// A server presenting `server.pem`; optionally requiring client certificates from this CA.
    func serverConfiguration(requireClientCertificate: Bool = false) -> TLSConfiguration {
        TLSConfiguration.server(
            identity: .pemFiles(certificateChain: serverCertificateFile, privateKey: serverKeyFile, password: nil),
            clientCertificateVerification: requireClientCertificate ? .require(.caFile(caFile)) : .none
        )
    }

    /// A client trusting only this CA, verifying `hostname`.
    func clientConfiguration(hostname: String = "127.0.0.1", identity: TLSConfiguration.Identity? = nil) -> TLSConfiguration {
        TLSConfiguration.client(serverHostname: hostname, trustRoots: .caFile(caFile), identity: identity)
    }
}

/// Runs the `openssl` command-line tool, the independent implementation these tests check ours
/// against; throws when it is not installed (scripts/setup installs Debian's `openssl`), so that a
/// machine without it fails the check instead of passing it unchecked.
func runOpenSSLCLI(_ arguments: [String], input: Data? = nil) throws -> (status: Int32, output: String) {
    let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/openssl" }
    let candidates = path + ["/usr/bin/openssl", "/usr/local/bin/openssl", "/opt/homebrew/bin/openssl"]
    guard let executable = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
        throw TestSupportError("the openssl command-line tool is not installed (run scripts/setup, which installs Debian's openssl)")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    let inputPipe = Pipe()
    process.standardInput = inputPipe
    try process.run()
    if let input { inputPipe.fileHandleForWriting.write(input) }
    try inputPipe.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
