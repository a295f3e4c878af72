import Testing

@testable import PushlineWorker

/// `JSONWriter` writes integers two digits at a time and `tenths` from one scaled integer: each
/// must read back as `String(value)` and `String(format: "%.1f")` would write it.
@Suite struct JSONWriterNumberTests {
    func written(_ body: (inout JSONWriter) -> Void) -> String {
        String(decoding: JSONWriter.encode(estimate: 4, body), as: UTF8.self)
    }

    @Test func integersAtEveryDigitCountAndTheExtremes() {
        var values: [Int64] = [0, 1, 9, -1, -9, .max, .min, .max - 1, .min + 1]
        var power: Int64 = 1
        for _ in 0..<18 {
            power *= 10
            values += [power - 1, power, power + 1, -(power - 1), -power, power / 2 + 7]
        }
        for value in values {
            #expect(written { $0.integer(value) } == String(value))
        }
        for value: UInt64 in [.max, .max - 1, 10_000_000_000_000_000_000, 9_999_999_999_999_999_999] {
            #expect(written { $0.integer(value) } == String(value))
        }
        for value: Int32 in [.max, .min, 0, 42] {
            #expect(written { $0.integer(value) } == String(value))
        }
    }

    @Test func integersAppendAfterWhatIsThere() {
        // Past the first estimate: the buffer grows, and digits land after the text before them.
        let text = written {
            $0.raw("[12345678901234567")
            $0.integer(1_790_000_000_000)
            $0.raw("]")
        }
        #expect(text == "[12345678901234567" + "1790000000000" + "]")
    }

    @Test func tenthsRoundToOneDecimalAndStayFiniteAndNonNegative() {
        let cases: [(Double, String)] = [
            (0, "0.0"), (0.04, "0.0"), (0.05, "0.1"), (12.44, "12.4"), (0.25, "0.3"), (99.96, "100.0"),
            (1234.5, "1234.5"), (-3, "0.0"), (.nan, "0.0"), (.infinity, "0.0"), (1e30, "100000000000000000.0"),
        ]
        for (value, text) in cases {
            #expect(written { $0.tenths(value) } == text, "\(value)")
        }
    }
}
