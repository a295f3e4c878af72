import Testing

@testable import PushlineAPNSCore

/// The UUID text of an apns-id, against a nibble-by-nibble reference: every byte value in every
/// position, and the generator's ids are canonical version-4 UUIDs.
@Suite struct APNSIDFormatTests {
    static func reference(_ high: UInt64, _ low: UInt64) -> String {
        let digits: [Character] = Array("0123456789abcdef")
        var text = ""
        for (value, count) in [(high, 16), (low, 16)] {
            for index in 0..<count {
                let shift = UInt64(60 - 4 * index)
                text.append(digits[Int((value >> shift) & 0xf)])
            }
        }
        var result = ""
        for (offset, character) in text.enumerated() {
            if [8, 12, 16, 20].contains(offset) { result.append("-") }
            result.append(character)
        }
        return result
    }

    @Test func everyByteInEveryPlaceIsWrittenAsTwoLowercaseDigits() {
        for byte in UInt64(0)...255 {
            for shift in stride(from: UInt64(0), to: 64, by: 8) {
                let high = byte << shift
                let low = ~(byte << shift)
                #expect(APNSIDGenerator.format(high, low) == Self.reference(high, low))
            }
        }
        #expect(APNSIDGenerator.format(0, 0) == "00000000-0000-0000-0000-000000000000")
        #expect(APNSIDGenerator.format(.max, .max) == "ffffffff-ffff-ffff-ffff-ffffffffffff")
    }

    @Test func generatedIDsAreCanonicalVersion4UUIDs() {
        let generator = APNSIDGenerator(seed: 42)
        for _ in 0..<1000 {
            let id = generator.next()
            let bytes = Array(id.utf8)
            #expect(bytes.count == 36)
            #expect([8, 13, 18, 23].allSatisfy { bytes[$0] == UInt8(ascii: "-") })
            #expect(bytes[14] == UInt8(ascii: "4"))
            #expect([UInt8(ascii: "8"), UInt8(ascii: "9"), UInt8(ascii: "a"), UInt8(ascii: "b")].contains(bytes[19]))
            #expect(id == id.lowercased())
        }
    }
}
