/// An X.509 name (subject or issuer) as an ordered list of attributes with OpenSSL short names:
/// "C", "O", "OU", "CN", "UID" (userId, 0.9.2342.19200300.100.1.1, which Apple's push
/// certificates use for the bundle id), ...
public struct DistinguishedName: Sendable, Hashable, CustomStringConvertible {
    /// One attribute, e.g. ("UID", "com.example.app").
    public struct Attribute: Sendable, Hashable {
        public var type: String
        public var value: String
        public init(_ type: String, _ value: String) {
            self.type = type
            self.value = value
        }
    }

    public var attributes: [Attribute]

    public init(_ attributes: [Attribute]) {
        self.attributes = attributes
    }

    /// A name with just a common name.
    public init(commonName: String) {
        self.attributes = [Attribute("CN", commonName)]
    }

    /// The first value of attribute `type` (short name, case-sensitive: "CN", "UID", "O"...).
    public subscript(type: String) -> String? {
        attributes.first { $0.type == type }?.value
    }

    /// All values of attribute `type` in order (e.g. several "OU").
    public func values(of type: String) -> [String] {
        attributes.filter { $0.type == type }.map(\.value)
    }

    public var commonName: String? { self["CN"] }
    /// The userId attribute; in an APNs certificate, the app's bundle id (the default topic).
    public var userID: String? { self["UID"] }

    /// "UID=com.example.app, CN=Apple Push Services: com.example.app" (in stored order).
    public var description: String {
        attributes.map { "\($0.type)=\($0.value)" }.joined(separator: ", ")
    }
}
