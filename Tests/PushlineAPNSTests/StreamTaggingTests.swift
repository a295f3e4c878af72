import PushlineAPNSCore
import Testing

@testable import PushlineAPNS

/// The stream tag's packed words (docs/architecture.md, "Unsafe constructs on the hot path"):
/// every field comes back as it went in, over seeded random values at the edges of their ranges.
@Suite struct StreamTaggingTests {
    @Test func everyFieldComesBackAsItWentIn() {
        var random = SplitMix64(seed: 0x5EED_7A65)
        var wrong: [String] = []
        for step in 0..<200_000 {
            let slot = step % 3 == 0 ? Int(UInt32.max) : Int(truncatingIfNeeded: random.next() % (UInt64(UInt32.max) + 1))
            let index = step % 5 == 0 ? Int(UInt32.max) : Int(truncatingIfNeeded: random.next() % 1_000_000)
            // Microseconds below 2^48 (8.9 years of uptime); the packing keeps microseconds.
            let micros = Int64(truncatingIfNeeded: random.next() % (1 << 48))
            let sentAt = MonotonicInstant(nanoseconds: micros * 1000)
            let generation = UInt16(truncatingIfNeeded: random.next())

            let id = StreamTagging.id(RequestID(slot), index: index)
            let value = StreamTagging.value(sentAt: sentAt, tokenGeneration: generation)
            if StreamTagging.requestID(id) != RequestID(slot) || StreamTagging.index(id) != index
                || StreamTagging.sentAt(value) != sentAt || StreamTagging.tokenGeneration(value) != generation
            {
                wrong.append("step \(step): slot \(slot), index \(index), \(micros) µs, generation \(generation)")
            }
        }
        let count = wrong.count
        #expect(count == 0, "wrong round trips, the first: \(wrong.prefix(3))")
    }
}
