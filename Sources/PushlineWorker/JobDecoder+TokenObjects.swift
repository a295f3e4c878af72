import PushlineAPNSCore

extension JobDecoder {
    /// Entry `index` of `tokens` written as an object, `{"token": "<hex>", "vars": {...}}`: its
    /// token appended to `tokens`, its variables read into `variables` (`RecordVariables` has the
    /// rules). Other members are ignored, as a job's own are; `token` is required, `vars` may be
    /// absent or null (no variables).
    static func decodeTokenObject(
        _ bytes: UnsafeBufferPointer<UInt8>,
        _ element: JSONScanner.Value,
        index: Int,
        tokens: inout APNSDeviceTokens,
        variables: inout RecordVariables
    ) throws(JobRejection) {
        let base = element.range.lowerBound
        let object = UnsafeBufferPointer(rebasing: bytes[element.range])
        var token: JSONScanner.Value?
        var vars: JSONScanner.Value?
        var repeated: String?
        do {
            try JSONScanner.forEachMemberKey(object) { key, value in
                let name = memberName(object, key)
                var shifted = value
                shifted.range = (value.range.lowerBound + base)..<(value.range.upperBound + base)
                switch name {
                case .token:
                    if token != nil { repeated = repeated ?? "token" }
                    token = shifted
                case .vars:
                    if vars != nil { repeated = repeated ?? "vars" }
                    vars = shifted
                case nil:
                    break
                }
            }
        } catch {
            // The record's scan validated it already.
            throw JobRejection(.invalidField, "tokens[\(index)]: \(error)")
        }
        if let repeated { throw JobRejection(.duplicateField, "tokens[\(index)].\(repeated)") }
        guard let token, token.kind != .null else { throw JobRejection(.missingField, "tokens[\(index)].token") }
        guard token.kind == .string else { throw JobRejection(.invalidField, "tokens[\(index)].token: not a string") }
        if let plain = plainHexToken(bytes, token) {
            tokens.append(bytes: UnsafeRawBufferPointer(plain))
        } else {
            let text = try? JSONScanner.string(bytes, token)
            guard let text, DeviceToken.isValid(text) else {
                let shown = text.map(DeviceToken.redacted) ?? "?"
                throw JobRejection(.invalidField, "tokens[\(index)].token: '\(shown)' is not even-length hex")
            }
            tokens.append(text)
        }
        guard let vars, vars.kind != .null else { return }
        guard vars.kind == .object else { throw JobRejection(.invalidField, "tokens[\(index)].vars: not a JSON object") }
        try variables.read(bytes, vars, token: index)
    }

    private enum TokenMember { case token, vars }

    /// Which member of a token object `key` names (escapes resolved when it has any).
    private static func memberName(_ object: UnsafeBufferPointer<UInt8>, _ key: JSONScanner.Value) -> TokenMember? {
        let spelled = UnsafeBufferPointer(rebasing: object[(key.range.lowerBound + 1)..<(key.range.upperBound - 1)])
        if spelled.elementsEqual("token".utf8) { return .token }
        if spelled.elementsEqual("vars".utf8) { return .vars }
        guard spelled.contains(UInt8(ascii: "\\")), let name = try? JSONScanner.string(object, key) else { return nil }
        return name == "token" ? .token : name == "vars" ? .vars : nil
    }

    /// The personalisation of a job with object tokens: its payload's template and the variables
    /// it reads; nil when the payload holds no placeholder (the job is then sent as written). A
    /// malformed template rejects the job.
    static func personalisation(
        _ bytes: UnsafeBufferPointer<UInt8>,
        payload: [UInt8],
        variables: RecordVariables,
        tokens: Int
    ) throws(JobRejection) -> Personalisation? {
        let template: PayloadTemplate?
        do {
            template = try PayloadTemplate.parse(payload)
        } catch {
            throw JobRejection(.invalidField, "payload: \(error)")
        }
        guard let template else { return nil }
        return Personalisation(template: template, variables: variables.table(bytes, template: template, tokens: tokens))
    }
}
