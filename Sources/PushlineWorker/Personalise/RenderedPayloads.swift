import PushlineAPNSCore

/// A personalised job's payloads, rendered once when the job starts (`Personalisation.render`):
/// those that could be rendered in one buffer, in token order, and the tokens that end without a
/// request (`missing_variable`, `payload_too_large`).
struct RenderedPayloads: Sendable {
    /// The job's tokens.
    let tokens: Int
    /// The rendered tokens' payloads, in token order (token `runs[k]` has payloads from the sum of
    /// the earlier runs' lengths on).
    let payloads: APNSPayloadBuffer
    /// Tokens with a placeholder whose variable they lack (no value, or null) and no default.
    let missing: [Int]
    /// Tokens whose rendered payload is larger than the push type allows.
    let tooLarge: [Int]

    /// The rendered tokens as runs of consecutive indices, each with where its payloads start in
    /// `payloads`: one run for the whole job when every token rendered.
    var runs: [(tokens: Range<Int>, firstPayload: Int)] {
        var failed = (missing + tooLarge)
        if failed.isEmpty { return tokens == 0 ? [] : [(0..<tokens, 0)] }
        failed.sort()
        var runs: [(tokens: Range<Int>, firstPayload: Int)] = []
        var start = 0
        var payload = 0
        for index in failed + [tokens] {
            if index > start {
                runs.append((start..<index, payload))
                payload += index - start
            }
            start = index + 1
        }
        return runs
    }
}
