import PushlineAPNSCore

/// Where a job goes: the broadcast channel of a `channel_id` job, or the device tokens of a
/// `token` or `tokens` job (plain hex read on the record's bytes; objects in
/// `JobDecoder+TokenObjects.swift`). A job names one or the other, never both.
extension JobDecoder {
    /// The broadcast channel of a `channel_id` job; nil for a job to tokens. A job names a
    /// channel or tokens, never both. The id is not checked further than being printable ASCII
    /// without spaces (it goes into a header): Apple says it is base64 and not to assume its
    /// length, so APNs is left to judge it (400 BadChannelId).
    func decodeChannelID(_ bytes: UnsafeBufferPointer<UInt8>, _ fields: JobFields) throws -> String? {
        guard let value = fields[.channelID], value.kind != .null else { return nil }
        let hasTokens = [fields[.token], fields[.tokens]].contains { $0.map { $0.kind != .null } == true }
        if hasTokens {
            throw JobRejection(.invalidField, "channel_id and token/tokens: a job is a broadcast or goes to tokens; give one of them")
        }
        guard value.kind == .string else { throw JobRejection(.invalidField, "channel_id: not a string") }
        let channelID = try JSONScanner.string(bytes, value)
        guard !channelID.isEmpty else { throw JobRejection(.invalidField, "channel_id: empty") }
        // Stricter than a field value needs; checked as one first so that whitespace and control
        // characters get the same words as in the other header fields.
        try Self.requireFieldValue(channelID, .channelID)
        guard channelID.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw JobRejection(.invalidField, "channel_id: '\(channelID)' is not printable ASCII without spaces (Apple's ids are base64)")
        }
        return channelID
    }

    func decodeTokens(
        _ bytes: UnsafeBufferPointer<UInt8>,
        _ fields: JobFields,
        variables: inout RecordVariables?
    ) throws -> APNSDeviceTokens {
        let single = fields[.token].flatMap { $0.kind == .null ? nil : $0 }
        let many = fields[.tokens].flatMap { $0.kind == .null ? nil : $0 }
        switch (single, many) {
        case (nil, nil):
            throw JobRejection(.missingField, "token, tokens or channel_id")
        case (.some, .some):
            throw JobRejection(.invalidField, "token and tokens: give one of them, not both")
        case (let value?, nil):
            guard value.kind == .string else { throw JobRejection(.invalidField, "token: not a string") }
            var tokens = APNSDeviceTokens()
            if let token = Self.plainHexToken(bytes, value) {
                tokens.append(bytes: UnsafeRawBufferPointer(token))
                return tokens
            }
            let token = try JSONScanner.string(bytes, value)
            guard DeviceToken.isValid(token) else {
                throw JobRejection(.invalidField, "token: '\(DeviceToken.redacted(token))' is not even-length hex")
            }
            tokens.append(token)
            return tokens
        case (nil, let value?):
            guard value.kind == .array else { throw JobRejection(.invalidField, "tokens: not an array") }
            var tokens = APNSDeviceTokens()
            // The array's text holds every token's text and more: one allocation, a little
            // larger than needed (quotes and commas), and no array of elements.
            tokens.reserveCapacity(bytes: value.range.count)
            var problem: JobRejection?
            let count = try JSONScanner.forEachElement(bytes, of: value) { index, element in
                guard problem == nil, index < maxTokens else { return }
                guard element.kind == .string else {
                    guard element.kind == .object else {
                        problem = JobRejection(.invalidField, "tokens[\(index)]: not a string or an object")
                        return
                    }
                    do throws(JobRejection) {
                        // Taken out while it grows, so that its entries are never copied.
                        var read = variables ?? RecordVariables()
                        variables = nil
                        try Self.decodeTokenObject(bytes, element, index: index, tokens: &tokens, variables: &read)
                        variables = read
                    } catch {
                        problem = error
                    }
                    return
                }
                if let token = Self.plainHexToken(bytes, element) {
                    tokens.append(bytes: UnsafeRawBufferPointer(token))
                    return
                }
                let token = try? JSONScanner.string(bytes, element)
                guard let token, DeviceToken.isValid(token) else {
                    let text = token.map(DeviceToken.redacted) ?? "?"
                    problem = JobRejection(.invalidField, "tokens[\(index)]: '\(text)' is not even-length hex")
                    return
                }
                tokens.append(token)
            }
            guard (1...maxTokens).contains(count) else {
                throw JobRejection(.invalidField, "tokens: \(count) tokens, must be 1..\(maxTokens)")
            }
            if let problem { throw problem }
            return tokens
        }
    }

    /// A token written as plain hex between its quotes (the usual case), checked on the record's
    /// bytes, which the caller copies into the job's token bytes; nil for anything else (escapes,
    /// bad characters), which then takes the general path and its error message.
    static func plainHexToken(_ bytes: UnsafeBufferPointer<UInt8>, _ value: JSONScanner.Value) -> UnsafeBufferPointer<UInt8>? {
        let body = UnsafeBufferPointer(rebasing: bytes[(value.range.lowerBound + 1)..<(value.range.upperBound - 1)])
        guard DeviceToken.isValid(utf8: body) else { return nil }
        return body
    }
}
