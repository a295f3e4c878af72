import Testing

@testable import PushlineAPNSCore

@Suite struct ProviderTokenTests {
    @Test func base64URLMatchesRFC4648Vectors() {
        let vectors: [(String, String)] = [
            ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
        ]
        for (plain, encoded) in vectors {
            #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
            #expect(Base64URL.decode(encoded) == Array(plain.utf8))
        }
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.decode("-_8") == [0xFB, 0xFF])
        #expect(Base64URL.decode("a+b") == nil)
        #expect(Base64URL.decode("a") == nil)
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64URL.decode("-_-_") == [0xFB, 0xFF, 0xBF])
        #expect(Base64URL.decode("Zm8=") == Array("fo".utf8))
        var bytes: [UInt8] = []
        for length in 0..<70 {
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
            bytes.append(UInt8(truncatingIfNeeded: length &* 37 &+ 11))
        }
    }

    @Test func tokenHasAPNsShapeAndParsesBack() throws {
        let token = try ProviderToken(keyID: "ABC123DEFG", teamID: "DEF123GHIJ", issuedAt: 1_790_000_000) { input in
            #expect(String(decoding: input, as: UTF8.self).split(separator: ".").count == 2)
            return [UInt8](repeating: 7, count: 64)
        }
        let parts = token.jwt.split(separator: ".")
        #expect(parts.count == 3)
        #expect(Base64URL.decode(parts[0]).map { String(decoding: $0, as: UTF8.self) } == #"{"alg":"ES256","kid":"ABC123DEFG"}"#)
        #expect(Base64URL.decode(parts[1]).map { String(decoding: $0, as: UTF8.self) } == #"{"iss":"DEF123GHIJ","iat":1790000000}"#)
        let parsed = try #require(ProviderToken.parse(token.jwt))
        #expect(parsed.algorithm == "ES256")
        #expect(parsed.keyID == "ABC123DEFG")
        #expect(parsed.teamID == "DEF123GHIJ")
        #expect(parsed.issuedAt == 1_790_000_000)
        #expect(parsed.signature == [UInt8](repeating: 7, count: 64))
        #expect(parsed.signingInput == Array((parts[0] + "." + parts[1]).utf8))
        #expect(ProviderToken.parse("not.a.jwt") == nil)
        #expect(ProviderToken.parse("abc") == nil)
    }

    @Test func policyMintsLazilyRefreshesAtFiftyMinutesAndRespectsTwenty() {
        var policy = ProviderTokenPolicy()
        let t0: Int64 = 1_790_000_000
        #expect(policy.tokenForRequest(now: t0) == .mint)
        policy.minted(jwt: "one", issuedAt: t0)
        #expect(policy.tokenForRequest(now: t0 + 49 * 60) == .use("one"))
        #expect(policy.tokenForRequest(now: t0 + 50 * 60) == .mint)

        // APNs says expired: a young token is not replaced (TooManyProviderTokenUpdates otherwise).
        #expect(policy.expiredReported(for: "one", now: t0 + 5 * 60) == .refuse)
        #expect(policy.expiredReported(for: "one", now: t0 + 20 * 60) == .mint)
        policy.minted(jwt: "two", issuedAt: t0 + 20 * 60)
        // Another connection's request with the old token: resend with the new one, no new mint.
        #expect(policy.expiredReported(for: "one", now: t0 + 21 * 60) == .resend(with: "two"))
    }
}
