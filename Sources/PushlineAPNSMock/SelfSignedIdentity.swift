import PushlineTLS
import PushlineTestCA

/// `--self-signed DIR`: a fresh CA and a server certificate signed by it, written as `ca.pem`,
/// `server.pem` (leaf then CA) and `server.key`, so a client trusts the mock with `apns.ca_file`.
public enum SelfSignedIdentity {
    /// The names every generated certificate carries, besides the listen host: loopback, and
    /// `mock-apns` (the service name in deploy/compose.yaml).
    public static let standardDNSNames = ["localhost", "mock-apns"]
    public static let standardIPAddresses = ["127.0.0.1", "::1"]

    /// Generates the files into `directory` (created if missing) and returns the server identity.
    @discardableResult
    public static func generate(into directory: String, host: String) throws -> CertifiedKey {
        try FileSystem.createDirectory(directory)
        let authority = try CertificateAuthority.create()
        var dnsNames = standardDNSNames
        var ipAddresses = standardIPAddresses
        if isIPAddress(host) {
            if !ipAddresses.contains(host), host != "0.0.0.0", host != "::" { ipAddresses.append(host) }
        } else if !dnsNames.contains(host) {
            dnsNames.insert(host, at: 0)
        }
        let server = try authority.issueServerCertificate(dnsNames: dnsNames, ipAddresses: ipAddresses, commonName: "Pushline mock APNs")
        try FileSystem.write(try authority.certificate.pem(), to: directory + "/ca.pem", mode: 0o644)
        let chain = try server.certificate.pem() + (try authority.certificate.pem())
        try FileSystem.write(chain, to: directory + "/server.pem", mode: 0o644)
        try FileSystem.write(try server.privateKey.pkcs8PEM(), to: directory + "/server.key", mode: 0o600)
        return server
    }

    static func isIPAddress(_ host: String) -> Bool {
        host.contains(":") || host.split(separator: ".").count == 4 && host.allSatisfy { $0.isNumber || $0 == "." }
    }
}
