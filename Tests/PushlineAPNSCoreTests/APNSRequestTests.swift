import Testing

@testable import PushlineAPNSCore

@Suite struct APNSRequestTests {
    let notification = APNSNotification(
        deviceToken: "ab12",
        topic: "com.example.app",
        pushType: .alert,
        expiration: 0,
        collapseID: "c1",
        apnsID: "123e4567-e89b-12d3-a456-426655440000",
        payload: Array("{}".utf8)
    )

    @Test func headersCarryAPNsIndexingFlags() {
        let first = APNSRequestHeaders.make(for: notification, authority: "api.push.apple.com", bearerToken: "jwt", firstOnConnection: true)
        let later = APNSRequestHeaders.make(
            for: notification,
            authority: "api.push.apple.com",
            bearerToken: "jwt",
            firstOnConnection: false
        )
        func field(_ fields: [APNSHeaderField], _ name: String) -> APNSHeaderField? { fields.first { $0.name == name } }
        #expect(field(first, ":path")?.value == "/3/device/ab12")
        #expect(field(first, ":path")?.indexing == .never)
        #expect(field(first, "authorization")?.value == "bearer jwt")
        #expect(field(first, "authorization")?.indexing == .never)
        for name in ["apns-id", "apns-expiration", "apns-collapse-id"] {
            #expect(field(first, name)?.indexing == .incremental, "\(name) first")
            #expect(field(later, name)?.indexing == .never, "\(name) later")
        }
        #expect(field(first, "apns-push-type")?.value == "alert")
        #expect(field(first, "apns-priority")?.value == "10")
        #expect(field(first, "apns-topic")?.indexing == .never)
        let certificate = APNSRequestHeaders.make(for: notification, authority: "h", bearerToken: nil, firstOnConnection: false)
        #expect(field(certificate, "authorization") == nil)
    }

    /// The client's request builder and the mock's rules are one table: what the client builds
    /// passes, up to the limits, and one byte over a limit is APNs' refusal.
    @Test func builtRequestsPassTheRequestRules() {
        func rejection(_ notification: APNSNotification) -> APNSRequestRules.Rejection? {
            let fields = APNSRequestHeaders.make(
                for: notification,
                authority: "api.push.apple.com",
                bearerToken: "jwt",
                firstOnConnection: true
            )
            let headers = fields.filter { !$0.name.hasPrefix(":") }.map { (name: $0.name, value: $0.value) }
            return notification.payload.withUnsafeBufferPointer { body in
                switch APNSRequestRules.check(method: "POST", path: notification.path, headers: headers, body: body) {
                case .success: nil
                case .failure(let rejection): rejection
                }
            }
        }
        var full = notification
        full.deviceToken = String(repeating: "ab", count: 32)
        full.payload = Array("{\"aps\":{}}".utf8)
        #expect(rejection(full) == nil)
        full.collapseID = String(repeating: "c", count: APNSRequestRules.maxCollapseIDBytes)
        full.payload = Array(("{\"a\":\"" + String(repeating: "x", count: full.pushType.maxPayloadBytes - 8) + "\"}").utf8)
        #expect(full.payload.count == full.pushType.maxPayloadBytes)
        #expect(rejection(full) == nil)
        var longCollapseID = full
        longCollapseID.collapseID! += "c"
        #expect(rejection(longCollapseID) == APNSRequestRules.Rejection(400, .badCollapseId))
        var largePayload = full
        largePayload.payload.insert(UInt8(ascii: " "), at: 0)
        #expect(rejection(largePayload) == APNSRequestRules.Rejection(413, .payloadTooLarge))
    }

    @Test func pushTypeDefaults() {
        #expect(APNSPushType.voip.defaultTopic(bundleID: "com.a") == "com.a.voip")
        #expect(APNSPushType.complication.defaultTopic(bundleID: "com.a") == "com.a.complication")
        #expect(APNSPushType.liveactivity.defaultTopic(bundleID: "com.a") == "com.a.push-type.liveactivity")
        #expect(APNSPushType.alert.defaultTopic(bundleID: "com.a") == "com.a")
        #expect(APNSPushType.background.defaultPriority == .powerConsiderate)
        #expect(APNSPushType.voip.maxPayloadBytes == 5120)
        #expect(APNSPushType.alert.maxPayloadBytes == 4096)
    }

    @Test func deviceTokenRules() {
        #expect(DeviceToken.isValid(String(repeating: "ab", count: 32)))
        #expect(DeviceToken.isValid(String(repeating: "AB", count: 50)))
        #expect(!DeviceToken.isValid("abc"))
        #expect(!DeviceToken.isValid(""))
        #expect(!DeviceToken.isValid("zz"))
        #expect(DeviceToken.redacted("0123456789abcdef") == "01234567…")
    }

    /// The check on bytes in memory goes eight at a time: it must agree with the per-character
    /// rule for every byte value at every offset (the last whole word and the padded tail too)
    /// and for every length.
    @Test func deviceTokenBytesAgreeWithTheRule() {
        func bufferCheck(_ bytes: [UInt8]) -> Bool {
            bytes.withUnsafeBufferPointer { DeviceToken.isValid(utf8: $0) }
        }
        for length in [2, 6, 8, 10, 14, 16, 64, 66, 70] {
            let valid = [UInt8]((0..<length).map { Array("0123456789abcdefABCDEF".utf8)[$0 % 22] })
            #expect(bufferCheck(valid), "valid token of \(length)")
            for position in 0..<length {
                for byte in UInt8.min...UInt8.max {
                    var token = valid
                    token[position] = byte
                    let expected = DeviceToken.isValid(utf8: token)
                    #expect(bufferCheck(token) == expected, "0x\(String(byte, radix: 16)) at \(position) of \(length)")
                }
            }
        }
        for length in 0...(DeviceToken.maxHexLength + 3) {
            let token = [UInt8](repeating: UInt8(ascii: "f"), count: length)
            #expect(bufferCheck(token) == DeviceToken.isValid(utf8: token), "length \(length)")
        }
    }

    func check(
        method: String = "POST",
        path: String = "/3/device/abcd",
        headers: [(name: String, value: String)] = [],
        body: String = "{\"aps\":{}}"
    ) -> APNSRequestRules.Rejection? {
        let bytes = Array(body.utf8)
        return bytes.withUnsafeBufferPointer { buffer in
            switch APNSRequestRules.check(method: method, path: path, headers: headers, body: buffer) {
            case .success: return nil
            case .failure(let rejection): return rejection
            }
        }
    }

    @Test func requestRulesMatchTheReferenceTable() {
        #expect(check() == nil)
        #expect(check(method: "GET") == .init(405, .methodNotAllowed))
        #expect(check(path: "/3/other/abcd") == .init(404, .badPath))
        #expect(check(path: "/3/device/") == .init(400, .missingDeviceToken))
        #expect(check(path: "/3/device/xyz1") == .init(400, .badDeviceToken))
        #expect(check(path: "/3/device/abc") == .init(400, .badDeviceToken))
        #expect(check(headers: [("apns-topic", "a"), ("apns-topic", "b")]) == .init(400, .duplicateHeaders))
        #expect(check(headers: [("apns-push-type", "fax")]) == .init(400, .invalidPushType))
        #expect(check(headers: [("apns-priority", "7")]) == .init(400, .badPriority))
        #expect(check(headers: [("apns-push-type", "background"), ("apns-priority", "10")]) == .init(400, .badPriority))
        #expect(check(headers: [("apns-expiration", "soon")]) == .init(400, .badExpirationDate))
        #expect(check(headers: [("apns-id", "not-a-uuid")]) == .init(400, .badMessageId))
        #expect(check(headers: [("apns-id", "123e4567-e89b-12d3-a456-426655440000")]) == nil)
        #expect(check(headers: [("apns-collapse-id", String(repeating: "x", count: 65))]) == .init(400, .badCollapseId))
        #expect(check(headers: [("apns-collapse-id", String(repeating: "x", count: 64))]) == nil)
        #expect(check(body: "") == .init(400, .payloadEmpty))
        let big = "{\"a\":\"" + String(repeating: "x", count: 4100) + "\"}"
        #expect(check(body: big) == .init(413, .payloadTooLarge))
        let voip = "{\"a\":\"" + String(repeating: "x", count: 5000) + "\"}"
        #expect(check(headers: [("apns-push-type", "voip")], body: voip) == nil)
        #expect(check(body: "[1]")?.status == 400)
        #expect(check(body: "{bad")?.status == 400)
    }
}

/// The byte-level rules the mock uses must agree with the String ones.
@Suite struct APNSRequestBytesTests {
    @Test func decimalParsesLikeInt64() {
        let samples = [
            "0", "-0", "+0", "10", "+5", "-5", "", "+", "-", " 1", "1 ", "1.0", "0x10", "٣",
            "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
            "00000000000000000000001", "99999999999999999999",
        ]
        for sample in samples {
            var text = sample
            let parsed = text.withUTF8 { APNSRequestRules.decimal(UnsafeRawBufferPointer($0)) }
            #expect(parsed == Int64(sample), "\(sample)")
        }
    }

    @Test func fieldsAreFoundByExactName() {
        for field in APNSRequestRules.Field.allCases {
            var name = field.name
            #expect(name.withUTF8 { APNSRequestRules.Field(name: UnsafeRawBufferPointer($0)) } == field)
        }
        for other in ["apns-priorit", "apns-priorityy", "Authorization", "authorizatioN", "apns-topik", "user-agent"] {
            var name = other
            #expect(name.withUTF8 { APNSRequestRules.Field(name: UnsafeRawBufferPointer($0)) } == nil, "\(other)")
        }
    }

    @Test func devicePathPrefixComparesLikeString() {
        for path in ["/3/device/abcd", "/3/device/", "/3/device", "/3/devices/ab", "/3/device/\u{301}ab", "/3/device/é"] {
            var text = path
            let token = text.withUTF8 { APNSRequestRules.deviceToken(inPath: UnsafeRawBufferPointer($0)).map { Array($0) } }
            #expect((token != nil) == path.hasPrefix("/3/device/"), "\(path)")
            if let token { #expect(token == Array(path.dropFirst(10).utf8)) }
        }
    }
}
