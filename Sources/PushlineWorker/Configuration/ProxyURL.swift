import Foundation
import PushlineAPNS
import PushlineAPNSCore

/// `apns.proxy`: `http://[user@]host:port`. A password never goes in the URL (the configuration
/// is printed and committed); it comes from the variable `apns.proxy_password_env` names.
struct ProxyURL: Sendable, Hashable {
    var user: String?
    var host: String
    var port: Int

    init(user: String?, host: String, port: Int) {
        self.user = user
        self.host = host
        self.port = port
    }

    /// Nil for anything but `http://[user@]host:port` (a trailing `/` is allowed).
    init?(_ text: String) {
        guard text.hasPrefix("http://") else { return nil }
        var rest = Substring(text.dropFirst("http://".count))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        if let at = rest.lastIndex(of: "@") {
            let user = rest[..<at]
            guard !user.isEmpty, !user.contains(":"), !user.contains("/") else { return nil }
            self.user = String(user)
            rest = rest[rest.index(after: at)...]
        }
        guard !rest.contains("/"), let address = HostPort(String(rest)) else { return nil }
        self.host = address.host
        self.port = address.port
    }

    /// The proxy for the APNs client; with a user, `Proxy-Authorization: Basic` (RFC 7617).
    func apnsProxy(password: String?) -> APNSProxy {
        let authorization = user.map { "Basic " + Data("\($0):\(password ?? "")".utf8).base64EncodedString() }
        return APNSProxy(host: host, port: port, authorization: authorization)
    }
}
