import PushlineAPNSCore

/// What makes a job personalised: its payload's template and its tokens' variables. A job has
/// one when some entry of its `tokens` is an object and its payload holds a placeholder; a job
/// without one is sent as written (its `{{` included).
struct Personalisation: Sendable, Hashable {
    let template: PayloadTemplate
    let variables: TokenVariables

    /// Every token's payload, rendered once (`limit`: the push type's largest payload). Two passes:
    /// each token's length first (no bytes written for a token that fails), then every rendered
    /// payload into one buffer of exactly their size.
    func render(limit: Int) -> RenderedPayloads {
        let tokens = variables.tokens
        let slots = template.slots
        let names = variables.names
        var ends: [Int32] = []
        ends.reserveCapacity(tokens)
        var missing: [Int] = []
        var tooLarge: [Int] = []
        var total = 0
        variables.withTables { cells, _ in
            for token in 0..<tokens {
                var length = template.literalBytes
                var complete = true
                for slot in slots {
                    let cell = (token * names + Int(slot.name)) * 2
                    if !cells.isEmpty, cells[cell] >= 0 {
                        length += Int(cells[cell + 1] - cells[cell])
                    } else if slot.hasFallback {
                        length += slot.fallbackCount
                    } else {
                        complete = false
                        break
                    }
                }
                if !complete {
                    missing.append(token)
                } else if length > limit {
                    tooLarge.append(token)
                } else {
                    total += length
                    ends.append(Int32(total))
                }
            }
        }
        let bytes = [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            guard let out = buffer.baseAddress else {
                initialized = 0
                return
            }
            var position = 0
            @inline(__always)
            func copy(_ from: UnsafePointer<UInt8>, _ count: Int) {
                (out + position).update(from: from, count: count)
                position += count
            }
            variables.withTables { cells, values in
                template.source.withUnsafeBufferPointer { source in
                    let base = source.baseAddress!
                    var failed = 0
                    let failures = missing.count + tooLarge.count
                    var nextMissing = 0
                    var nextTooLarge = 0
                    for token in 0..<tokens {
                        if failed < failures {
                            if nextMissing < missing.count, missing[nextMissing] == token {
                                nextMissing += 1
                                failed += 1
                                continue
                            }
                            if nextTooLarge < tooLarge.count, tooLarge[nextTooLarge] == token {
                                nextTooLarge += 1
                                failed += 1
                                continue
                            }
                        }
                        var literal = 0
                        for slot in slots {
                            copy(base + literal, Int(slot.start) - literal)
                            let cell = (token * names + Int(slot.name)) * 2
                            if !cells.isEmpty, cells[cell] >= 0 {
                                copy(values.baseAddress! + Int(cells[cell]), Int(cells[cell + 1] - cells[cell]))
                            } else {
                                copy(base + Int(slot.fallbackStart), slot.fallbackCount)
                            }
                            literal = Int(slot.end)
                        }
                        copy(base + literal, source.count - literal)
                    }
                }
            }
            precondition(position == total, "rendered \(position) bytes of \(total)")
            initialized = position
        }
        return RenderedPayloads(
            tokens: tokens,
            payloads: APNSPayloadBuffer(bytes: bytes, ends: ends),
            missing: missing,
            tooLarge: tooLarge
        )
    }

    /// The job's tokens `indices` only (ascending): a job resumed with its unanswered tokens.
    func narrowed(to indices: [Int]) -> Personalisation {
        Personalisation(template: template, variables: variables.narrowed(to: indices))
    }
}
