import Testing

@testable import PushlineWorker

@Suite struct ProxyURLTests {
    @Test func theFormsOfAProxyURL() {
        #expect(ProxyURL("http://proxy.corp:3128") == ProxyURL(user: nil, host: "proxy.corp", port: 3128))
        #expect(ProxyURL("http://pushline@10.0.0.1:8080/") == ProxyURL(user: "pushline", host: "10.0.0.1", port: 8080))
        #expect(ProxyURL("http://[::1]:3128")?.host == "::1")
        for bad in [
            "", "proxy:3128", "https://proxy:3128", "http://proxy", "http://user:pw@proxy:3128", "http://@proxy:1", "http://p:1/path",
        ] {
            #expect(ProxyURL(bad) == nil, "\(bad)")
        }
    }

    @Test func aUserGetsBasicAuthorizationWithThePasswordFromTheEnvironment() {
        let proxy = ProxyURL("http://pushline@127.0.0.1:3128")!.apnsProxy(password: "s3cret")
        #expect(proxy.authorization == "Basic cHVzaGxpbmU6czNjcmV0")
        #expect(ProxyURL("http://127.0.0.1:3128")!.apnsProxy(password: "ignored").authorization == nil)
        #expect("\(proxy)" == "127.0.0.1:3128", "logs show no credentials")
    }

    @Test func configurationProblemsNameTheKey() {
        #expect(
            ConfigurationRule.proxyOrEmpty.problems(.string("socks5://p:1"), key: "apns.proxy") == [
                "apns.proxy: 'socks5://p:1' is not http://[user@]host:port"
            ]
        )
        let password = ConfigurationRule.proxyOrEmpty.problems(.string("http://u:pw@p:1"), key: "apps.a.proxy")
        #expect(password.count == 1 && password[0].hasPrefix("apps.a.proxy: a password in the URL is refused"))
        #expect(ConfigurationRule.proxyOrEmpty.problems(.string(""), key: "apns.proxy") == [])
    }
}
