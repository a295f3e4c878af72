import PushlineTLS

extension MockConfiguration.AuthKey {
    /// A fresh P-256 signing key, as Apple issues one: writes the private key to `privateKeyFile`
    /// (PKCS#8 PEM, mode 0600, the `.p8` a client signs its provider tokens with) and returns the
    /// matching key for `MockConfiguration.authKeys`, so the mock accepts those tokens.
    public static func generate(keyID: String, teamID: String, privateKeyFile: String) throws -> MockConfiguration.AuthKey {
        let key = try PrivateKey.generateP256()
        try FileSystem.write(try key.pkcs8PEM(), to: privateKeyFile, mode: 0o600)
        return MockConfiguration.AuthKey(keyID: keyID, teamID: teamID, publicKeyPEM: try key.publicKeyPEM())
    }
}
