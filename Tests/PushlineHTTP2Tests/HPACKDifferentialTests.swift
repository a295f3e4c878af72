import Foundation
import NIOCore
import PushlineAPNSCore
import Testing

@testable import PushlineHTTP2

/// The request path's header writing (`HTTP2HeaderBlock`, `HTTP2RequestHeadersFrame`,
/// `HPACKRequestEncoder` and its memos, `HTTP2ConstantFields` keys) against nghttp2's own HPACK
/// coder, over long seeded random sequences of requests (`RandomRequestSequence`): every block
/// must decode, with nghttp2's inflater, to exactly the fields the request was given (names,
/// values, order, never-indexed flags), and be the bytes nghttp2's deflater writes for them (the
/// same representation of each field: Apple's indexing rule). Requests are submitted in runs,
/// some dropped before their HEADERS leave, some abandoned; connections end and start; the
/// peer's table size changes.
///
/// `PUSHLINE_HPACK_BLOCKS` (default 100,000) and `PUSHLINE_HPACK_SEED` (default: a new one, printed)
/// repeat or lengthen a run: `scripts/test --hpack-soak N` runs N blocks.
@Suite struct HPACKDifferentialTests {
    @Test func everyBlockDecodesToItsRequestsFieldsAsNghttp2WritesThem() throws {
        let environment = ProcessInfo.processInfo.environment
        let blocks = environment["PUSHLINE_HPACK_BLOCKS"].flatMap { Int($0) } ?? 100_000
        let seed = environment["PUSHLINE_HPACK_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("HPACK differential: \(blocks) blocks, seed \(seed) (PUSHLINE_HPACK_SEED=\(seed) repeats it)")
        var run = DifferentialRun(seed: seed)
        try run.run(blocks: blocks)
        #expect(run.written >= blocks)
        #expect(run.connections > 1)
        #expect(run.tableSizeUpdates > 0 || blocks < 20_000)
        #expect(run.failures.isEmpty, "seed \(seed): \(run.failureCount) of \(run.written) blocks wrong; first: \(run.failures)")
        print(
            "HPACK differential: \(run.written) blocks on \(run.connections) connections, \(run.dropped) dropped, "
                + "\(run.abandoned) abandoned, \(run.tableSizeUpdates) table size updates; \(run.failureCount) wrong"
        )
    }

    /// The differential test finds a stale value: a memo that wrote a field's old bytes would
    /// make these blocks differ. (The sequence generator itself is checked: it does produce
    /// values that change and come back under new keys.)
    @Test func theSequenceChangesConstantGroupsAndBringsValuesBack() {
        var sequence = RandomRequestSequence(seed: 7, firstJob: 0)
        var keysByValue: [String: Set<UInt64>] = [:]
        for _ in 0..<5000 {
            for part in sequence.next() {
                guard case .constants(let constants, let reference) = part else { continue }
                for (field, expected) in zip(constants.fields, reference) {
                    #expect(Array(field.value) == expected.value)
                    keysByValue[expected.description, default: []].insert(field.key)
                }
            }
        }
        #expect(keysByValue.values.contains { $0.count > 3 }, "a value comes back under new keys")
        #expect(keysByValue.keys.contains { $0.hasPrefix("apns-collapse-id") })
        #expect(keysByValue.keys.contains { $0.hasPrefix("apns-expiration") })
    }
}

/// One seeded run: connections one after another, each with its session's block and encoder on
/// our side and a deflater and an inflater on nghttp2's.
struct DifferentialRun {
    private var random: SplitMix64
    private let seed: UInt64
    private(set) var written = 0
    private(set) var connections = 0
    private(set) var dropped = 0
    private(set) var abandoned = 0
    private(set) var tableSizeUpdates = 0
    private(set) var failureCount = 0
    private(set) var failures: [String] = []

    init(seed: UInt64) {
        self.seed = seed
        random = SplitMix64(seed: seed)
    }

    mutating func run(blocks: Int) throws {
        while written < blocks {
            connections += 1
            let length = 1 + Int(random.next() % 8000)
            try runConnection(blocks: min(length, blocks - written))
        }
    }

    /// A connection's requests, submitted in runs of up to eight and sent in stream order.
    private mutating func runConnection(blocks: Int) throws {
        let connection = Connection()
        var sequence = RandomRequestSequence(seed: seed &+ UInt64(connections), firstJob: written)
        var streamID: Int32 = 1
        var sent = 0
        var buffer = ByteBufferAllocator().buffer(capacity: 16_384)
        while sent < blocks {
            // About seven times in 100,000 blocks at random, and at the start of every third
            // connection, so that no seed runs without a table size update.
            if random.next() % 3000 == 0 || (sent == 0 && connections % 3 == 2) {
                connection.deflater.changeTableSize([0, 64, 100, 256, 1024, 4096, Int(random.next() % 4097)][Int(random.next() % 7)])
                tableSizeUpdates += 1
            }
            var submitted: [(streamID: Int32, fields: [ReferenceField])] = []
            for _ in 0..<1 + Int(random.next() % 8) {
                let parts = sequence.next()
                connection.block.beginRequest()
                var fields: [ReferenceField] = []
                for part in parts {
                    switch part {
                    case .constants(let constants, let reference):
                        connection.block.append(constants)
                        fields += reference
                    case .field(let field):
                        connection.block.append(
                            String(decoding: field.name, as: UTF8.self),
                            String(decoding: field.value, as: UTF8.self),
                            neverIndex: field.neverIndex
                        )
                        fields.append(field)
                    }
                }
                if random.next() % 500 == 0 {
                    connection.block.abandonRequest()
                    abandoned += 1
                    continue
                }
                connection.block.commitRequest(streamID: streamID)
                submitted.append((streamID, fields))
                streamID += 2
            }
            for request in submitted {
                if random.next() % 500 == 0 {
                    dropped += 1
                    continue
                }
                try check(request.fields, on: request.streamID, connection: connection, buffer: &buffer)
                sent += 1
                written += 1
            }
        }
    }

    /// Writes the request's HEADERS frame as the session does (in place of nghttp2's stand-in,
    /// with the size updates the deflater put ahead of its block) and compares the block.
    private mutating func check(_ fields: [ReferenceField], on streamID: Int32, connection: Connection, buffer: inout ByteBuffer) throws {
        let expected = connection.deflater.deflate(fields)
        var updates = 0
        expected.withUnsafeBytes { bytes in
            while updates < bytes.count, bytes[updates] & 0xe0 == 0x20, let update = HPACKInteger.read(bytes, at: updates, prefix: 5) {
                updates += update.count
            }
        }
        var frame: [UInt8] = [0, 0, UInt8(updates + 1), HTTP2RequestHeadersFrame.headersType, 0x4]
        frame += withUnsafeBytes(of: UInt32(streamID).bigEndian) { Array($0) }
        frame += expected[..<updates]
        frame.append(0x83)
        buffer.clear()
        try frame.withUnsafeBytes { frame in
            try HTTP2RequestHeadersFrame.write(replacing: frame, fields: &connection.block, encoder: &connection.encoder, into: &buffer)
        }
        let bytes = buffer.readableBytesView
        let length = Int(bytes[bytes.startIndex]) << 16 | Int(bytes[bytes.startIndex + 1]) << 8 | Int(bytes[bytes.startIndex + 2])
        let block = Array(bytes.dropFirst(HTTP2RequestHeadersFrame.headerCount))
        let decoded = connection.inflater.decode(block)
        var problems: [String] = []
        if length != block.count || bytes[bytes.startIndex + 3] != HTTP2RequestHeadersFrame.headersType {
            problems.append("frame: length \(length) for \(block.count) bytes, type \(bytes[bytes.startIndex + 3])")
        }
        switch decoded {
        case .failure(let error):
            problems.append("nghttp2 cannot decode it: \(error)")
        case .success(let decoded) where decoded != fields:
            let differing = zip(decoded, fields).enumerated().first { $0.element.0 != $0.element.1 }
            problems.append(
                "decodes to \(decoded.count) fields for \(fields.count); first difference at \(differing?.offset ?? -1): "
                    + "\(differing.map { "\($0.element.0) instead of \($0.element.1)" } ?? "-")"
            )
        case .success:
            break
        }
        if block != expected { problems.append("not nghttp2's bytes: \(block.count) bytes for \(expected.count)") }
        let tables = (connection.inflater.tableEntries, connection.deflater.tableEntries, connection.encoder.dynamicTable.count + 61)
        if tables.0 != tables.1 || tables.1 != tables.2 {
            problems.append("table entries: inflater \(tables.0), deflater \(tables.1), encoder's model \(tables.2)")
        }
        guard !problems.isEmpty else { return }
        failureCount += 1
        if failures.count < 3 {
            failures.append("block \(written) (connection \(connections), stream \(streamID)): " + problems.joined(separator: "; "))
        }
    }

    /// Both sides of one connection's header compression.
    final class Connection {
        var block = HTTP2HeaderBlock()
        var encoder = HPACKRequestEncoder()
        let deflater = NGHTTP2Deflater()
        let inflater = NGHTTP2Inflater()
    }
}
