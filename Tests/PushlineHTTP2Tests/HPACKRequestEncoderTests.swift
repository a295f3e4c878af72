import CNGHTTP2
import NIOCore
import Testing

@testable import PushlineHTTP2

/// The request encoder against nghttp2's own HPACK deflater and inflater (its public `nghttp2_hd_*`
/// API): for the same fields and flags, the same bytes, and blocks that decode to the fields.
@Suite struct HPACKRequestEncoderTests {
    struct Field {
        var name: String
        var value: [UInt8]
        var neverIndex: Bool
        /// As `HTTP2ConstantFields` gives it (0: not a constant field).
        var constantKey: UInt64 = 0

        init(name: String, value: String, neverIndex: Bool) {
            self.init(name: name, bytes: Array(value.utf8), neverIndex: neverIndex)
        }

        init(name: String, bytes: [UInt8], neverIndex: Bool) {
            self.name = name
            self.value = bytes
            self.neverIndex = neverIndex
        }
    }

    /// An APNs request as PooledConnection writes it: Apple's rule, first on the connection or not.
    static func request(
        _ number: Int,
        first: Bool,
        collapse: Bool = false,
        jwt: String = String(repeating: "eyJhbGciOiJFUzI1NiJ9.x_", count: 7)
    ) -> [Field] {
        let token = (0..<32).map { _ in String(UInt8.random(in: 0...255), radix: 16) }.joined()
        var fields = [
            Field(name: ":method", value: "POST", neverIndex: false),
            Field(name: ":scheme", value: "https", neverIndex: false),
            Field(name: ":authority", value: "api.push.apple.com", neverIndex: true),
            Field(name: ":path", value: "/3/device/\(token)", neverIndex: true),
            Field(name: "authorization", value: "bearer \(jwt)", neverIndex: true),
            Field(name: "apns-push-type", value: "alert", neverIndex: true),
            Field(name: "apns-topic", value: "com.example.app", neverIndex: true),
            Field(name: "apns-priority", value: "10", neverIndex: true),
            Field(name: "apns-id", value: "4D4F4A8E-0000-4000-8000-\(lastGroup(number))", neverIndex: !first),
            Field(name: "apns-expiration", value: "\(1_700_000_000 + number % 3)", neverIndex: !first),
        ]
        if collapse { fields.append(Field(name: "apns-collapse-id", value: "group-\(number % 2)", neverIndex: !first)) }
        return fields
    }

    /// One deflater (nghttp2) and one encoder (ours), fed the same blocks.
    final class Pair {
        var deflater: OpaquePointer?
        var encoder = HPACKRequestEncoder()

        init() { #expect(nghttp2_hd_deflate_new(&deflater, 4096) == 0) }
        deinit { nghttp2_hd_deflate_del(deflater) }

        func nghttp2Block(_ fields: [Field]) -> [UInt8] {
            let names = fields.map { Array($0.name.utf8) }
            let values = fields.map(\.value)
            var output = [UInt8](repeating: 0, count: 64 * 1024)
            var nva: [nghttp2_nv] = []
            var count = 0
            withPointers(names) { namePointers in
                withPointers(values) { valuePointers in
                    for index in fields.indices {
                        nva.append(
                            nghttp2_nv(
                                name: namePointers[index],
                                value: valuePointers[index],
                                namelen: names[index].count,
                                valuelen: values[index].count,
                                flags: fields[index].neverIndex ? UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) : 0
                            )
                        )
                    }
                    count = nghttp2_hd_deflate_hd(deflater, &output, output.count, &nva, nva.count)
                }
            }
            #expect(count > 0)
            return Array(output[..<max(count, 0)])
        }

        func ourBlock(_ fields: [Field]) -> [UInt8] {
            HPACKRequestEncoderTests.block(fields, encoder: &encoder)
        }

        /// Tells our encoder of the table size updates nghttp2 put ahead of `block`, as the frame
        /// writer does; returns how many bytes they take.
        func applySizeUpdates(ahead block: [UInt8]) -> Int {
            var updates = 0
            block.withUnsafeBytes { bytes in
                while bytes[updates] & 0xe0 == 0x20, let update = HPACKInteger.read(bytes, at: updates, prefix: 5) {
                    encoder.tableSizeUpdated(to: update.value)
                    updates += update.count
                }
            }
            return updates
        }
    }

    @Test func writesTheBytesNghttp2WritesForAConnectionsRequests() {
        let pair = Pair()
        var blocks: [[UInt8]] = []
        for number in 0..<200 {
            let fields = Self.request(number, first: number == 0, collapse: number >= 100)
            let expected = pair.nghttp2Block(fields)
            let ours = pair.ourBlock(fields)
            #expect(ours == expected, "request \(number)")
            blocks.append(ours)
        }
        // A changed provider token (a rotation) and a custom field that is not never indexed.
        var rotated = Self.request(200, first: false, jwt: "rotated.token.value")
        rotated.append(Field(name: "x-custom", value: "same", neverIndex: false))
        for _ in 0..<3 {
            #expect(pair.ourBlock(rotated) == pair.nghttp2Block(rotated))
        }
        #expect(pair.encoder.dynamicTable.count == Int(nghttp2_hd_deflate_get_num_table_entries(pair.deflater)) - 61)
        // The blocks decode, in order, to the fields with their never-indexed flags.
        let decoded = Self.inflate(blocks)
        #expect(decoded.count == 200)
        #expect(decoded[150].first { $0.name == "apns-id" }?.neverIndex == true)
        #expect(decoded[0].first { $0.name == "apns-id" }?.neverIndex == false)
        #expect(decoded[7].first { $0.name == ":path" }.map { String(decoding: $0.value, as: UTF8.self).hasPrefix("/3/device/") } == true)
    }

    /// A value that changes on every request (then is no longer remembered), settles (and is
    /// remembered again), and changes again: nghttp2's bytes throughout, and the fields decode.
    @Test func aValueThatStopsChangingIsRememberedAgain() {
        let pair = Pair()
        var blocks: [[UInt8]] = []
        var values: [String] = (0..<20).map { "changing-\($0)" }
        values += Array(repeating: "settled", count: 3 * HPACKFieldMemo.changesBeforeForgetting)
        values += ["changing-0", "changing-0", "settled"] + (0..<10).map { "again-\($0)" } + ["settled", "settled"]
        for (number, value) in values.enumerated() {
            let fields = [
                Field(name: ":method", value: "POST", neverIndex: false),
                Field(name: "x-value", value: value, neverIndex: true),
                Field(name: "x-numbered", value: "\(number / 3)", neverIndex: true),
            ]
            let ours = pair.ourBlock(fields)
            #expect(ours == pair.nghttp2Block(fields), "request \(number): \(value)")
            blocks.append(ours)
        }
        let decoded = Self.inflate(blocks)
        #expect(decoded.map { String(decoding: $0[1].value, as: UTF8.self) } == values)
        #expect(decoded.map { String(decoding: $0[2].value, as: UTF8.self) } == values.indices.map { "\($0 / 3)" })
    }

    /// Constant fields (the pseudo-headers and the token, as PooledConnection sends them) are
    /// known by their keys, not their bytes: the blocks are still nghttp2's, through a token
    /// rotation, a field that moves to another position, and table size updates.
    @Test func constantFieldsWriteTheBytesNghttp2Writes() {
        let pair = Pair()
        func keyed(_ fields: [Field], token key: UInt64) -> [Field] {
            var fields = fields
            for index in 0..<3 { fields[index].constantKey = UInt64(index + 1) }
            fields[4].constantKey = key
            return fields
        }
        for number in 0..<150 {
            let rotated = number >= 100
            var fields = keyed(
                Self.request(number, first: number == 0, jwt: rotated ? "rotated.token.value" : "first.token"),
                token: rotated ? 11 : 10
            )
            if number % 50 == 49 {
                // A block without `:path`: the token moves to another position, where another
                // field was remembered.
                fields.remove(at: 3)
            }
            #expect(pair.ourBlock(fields) == pair.nghttp2Block(fields), "request \(number)")
        }
        for size in [0, 100, 4096] {
            #expect(nghttp2_hd_deflate_change_table_size(pair.deflater, size) == 0)
            let fields = keyed(Self.request(200, first: false, jwt: "rotated.token.value"), token: 11)
            let expected = pair.nghttp2Block(fields)
            let updates = pair.applySizeUpdates(ahead: expected)
            #expect(Array(expected[updates...]) == pair.ourBlock(fields), "table size \(size)")
            #expect(pair.ourBlock(fields) == pair.nghttp2Block(fields), "table size \(size), again")
        }
    }

    @Test func followsADynamicTableSizeUpdate() {
        let pair = Pair()
        _ = pair.ourBlock(Self.request(0, first: true))
        _ = pair.nghttp2Block(Self.request(0, first: true).map { $0 })  // (same fields, other token: only sizes matter)
        for size in [0, 100, 4096] {
            #expect(nghttp2_hd_deflate_change_table_size(pair.deflater, size) == 0)
            let fields = Self.request(1, first: true)
            let expected = pair.nghttp2Block(fields)
            // nghttp2 puts the update ahead of the block; the frame writer copies it and tells
            // the encoder.
            let updates = pair.applySizeUpdates(ahead: expected)
            #expect(updates > 0)
            #expect(Array(expected[updates...]) == pair.ourBlock(fields), "table size \(size)")
            #expect(pair.encoder.dynamicTable.maxSize == size)
        }
    }

    @Test func huffmanCodesEveryByteAsTheRFCSays() {
        // Every byte value, in strings of every length up to 64, and an empty one: decoded by
        // nghttp2's inflater. Each field's value differs from the one before at its position.
        var blocks: [[UInt8]] = []
        var values: [[UInt8]] = [[]]
        for length in 1...64 {
            values.append((0..<length).map { _ in UInt8.random(in: 0...255) } + [UInt8(length - 1), UInt8(255 - length)])
        }
        // Common characters are Huffman-coded (shorter), so both kinds of literal are written;
        // the last two repeat, so the remembered coded value is written too.
        values += [Array("0123456789abcdef".utf8), Array("0123456789abcdef".utf8), []]
        var encoder = HPACKRequestEncoder()
        for value in values {
            blocks.append(Self.block([Field(name: "x-bytes", bytes: value, neverIndex: true)], encoder: &encoder))
        }
        #expect(blocks[blocks.count - 2].count < 2 + 7 + 1 + 16)
        let decoded = Self.inflate(blocks)
        #expect(decoded.map { $0[0].value } == values)
        #expect(decoded.allSatisfy { $0[0].neverIndex && $0[0].name == "x-bytes" })
    }

    struct Decoded {
        var name: String
        var value: [UInt8]
        var neverIndex: Bool
    }

    /// `fields` as `encoder` writes them, within the bound the frame writer reserves.
    static func block(_ fields: [Field], encoder: inout HPACKRequestEncoder) -> [UInt8] {
        let bound = fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.count + HPACKWriter.overheadPerField }
        var bytes: [UInt8] = []
        HPACKWriter.write(into: &bytes, bound: bound) { writer in
            for (position, field) in fields.enumerated() {
                Array(field.name.utf8).withUnsafeBytes { name in
                    field.value.withUnsafeBytes { value in
                        encoder.encode(
                            name: name,
                            value: value,
                            neverIndex: field.neverIndex,
                            position: position,
                            constantKey: field.constantKey,
                            into: &writer
                        )
                    }
                }
            }
        }
        return bytes
    }

    /// Decodes blocks in order with one nghttp2 inflater (`NGHTTP2Inflater`).
    static func inflate(_ blocks: [[UInt8]]) -> [[Decoded]] {
        let inflater = NGHTTP2Inflater()
        return blocks.map { block in
            let fields: [ReferenceField]
            switch inflater.decode(block) {
            case .success(let decoded):
                fields = decoded
            case .failure(let error):
                Issue.record("nghttp2 cannot decode a block: \(error)")
                fields = []
            }
            return fields.map { Decoded(name: String(decoding: $0.name, as: UTF8.self), value: $0.value, neverIndex: $0.neverIndex) }
        }
    }
}

private func withPointers(_ arrays: [[UInt8]], _ body: ([UnsafeMutablePointer<UInt8>]) -> Void) {
    var pointers: [UnsafeMutablePointer<UInt8>] = []
    for array in arrays {
        let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: max(array.count, 1))
        pointer.initialize(from: array, count: array.count)
        pointers.append(pointer)
    }
    defer { pointers.forEach { $0.deallocate() } }
    body(pointers)
}

/// `number` as 12 uppercase hex digits (an id's last group).
private func lastGroup(_ number: Int) -> String {
    let digits = String(number, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, 12 - digits.count)) + digits
}
