import CNGHTTP2
import NIOCore

/// A client request's HEADERS frame, written in place of the stand-in nghttp2 framed.
///
/// nghttp2 keeps the stream's state (it opened the stream, and it checks and reads the response),
/// but it has no call that takes a finished header block, and coding every request's fields
/// through its deflater was the largest single item of a worker's profile. So each request is
/// submitted with a stand-in block of one field (`:method: POST`, a static index nghttp2 never
/// adds to its table), and when nghttp2 hands out that frame, this writes the same frame with the
/// request's real block (`HPACKRequestEncoder`). nghttp2's own table stays empty, so nothing it
/// writes can name an entry the peer does not hold; the dynamic table size updates it puts ahead
/// of a block after the peer's SETTINGS are kept and applied to the encoder's table too.
enum HTTP2RequestHeadersFrame {
    static let headerCount = 9
    static let headersType: UInt8 = 0x1
    private static let continuationType: UInt8 = 0x9
    private static let endHeaders: UInt8 = 0x4
    private static let padded: UInt8 = 0x8
    private static let priority: UInt8 = 0x20
    /// SETTINGS_MAX_FRAME_SIZE's floor: every peer takes payloads this long.
    private static let maxPayload = 16_384
    /// The stand-in block as nghttp2 codes it: static index 3.
    private static let standInCode: UInt8 = 0x83

    /// Calls `body` with the stand-in field, whose name and value are static strings nghttp2 may
    /// keep without copying.
    static func withStandIn<R>(_ body: (UnsafePointer<nghttp2_nv>) -> R) -> R {
        let name: StaticString = ":method"
        let value: StaticString = "POST"
        var field = nghttp2_nv(
            name: UnsafeMutablePointer(mutating: name.utf8Start),
            value: UnsafeMutablePointer(mutating: value.utf8Start),
            namelen: name.utf8CodeUnitCount,
            valuelen: value.utf8CodeUnitCount,
            flags: UInt8(NGHTTP2_NV_FLAG_NO_COPY_NAME.rawValue | NGHTTP2_NV_FLAG_NO_COPY_VALUE.rawValue)
        )
        return withUnsafePointer(to: &field) { body($0) }
    }

    /// Appends `frame` (a HEADERS frame nghttp2 serialized with the stand-in block) to `buffer`
    /// with its stream's real block; a block longer than one frame continues in CONTINUATION
    /// frames. Throws when the frame is not one this session submitted.
    static func write(
        replacing frame: UnsafeRawBufferPointer,
        fields: inout HTTP2HeaderBlock,
        encoder: inout HPACKRequestEncoder,
        into buffer: inout ByteBuffer
    ) throws {
        let flags = frame[4]
        let streamID = Int32(bitPattern: UInt32(bigEndian: frame.loadUnaligned(fromByteOffset: 5, as: UInt32.self)) & 0x7fff_ffff)
        guard flags & padded == 0 else { throw unexpected("a padded request HEADERS frame") }
        var offset = headerCount + (flags & priority != 0 ? 5 : 0)
        while offset < frame.count, frame[offset] & 0xe0 == 0x20 {
            guard let update = HPACKInteger.read(frame, at: offset, prefix: 5) else {
                throw unexpected("a truncated dynamic table size update")
            }
            encoder.tableSizeUpdated(to: update.value)
            offset += update.count
        }
        guard offset == frame.count - 1, frame[offset] == standInCode else {
            throw unexpected("a request HEADERS frame without the stand-in block")
        }
        guard let request = fields.request(onStream: streamID) else {
            throw unexpected("HEADERS for stream \(streamID), which has no submitted request")
        }
        let frameStart = buffer.writerIndex
        // The frame header (its length set below), any priority fields and size updates, then the
        // block, written in place within a bound reserved once.
        let bound = offset + request.bytes + request.fields * HPACKWriter.overheadPerField
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: bound) { memory in
            memory.copyMemory(from: UnsafeRawBufferPointer(rebasing: frame[..<offset]))
            var writer = HPACKWriter(UnsafeMutableRawBufferPointer(rebasing: memory[offset..<bound]))
            fields.forEachFieldOfFoundRequest { position, name, value, neverIndex, constantKey in
                encoder.encode(
                    name: name,
                    value: value,
                    neverIndex: neverIndex,
                    position: position,
                    constantKey: constantKey,
                    into: &writer
                )
            }
            return offset + writer.count
        }
        let payload = buffer.writerIndex - frameStart - headerCount
        guard payload > maxPayload else {
            setLength(payload, ofFrameAt: frameStart, in: &buffer)
            return
        }
        // Rare (a block over 16 KiB): HEADERS without END_HEADERS, then CONTINUATION frames.
        let block = buffer.getBytes(at: frameStart + headerCount, length: payload)!
        buffer.moveWriterIndex(to: frameStart)
        var chunkStart = 0
        while chunkStart < block.count {
            let chunkEnd = min(chunkStart + maxPayload, block.count)
            let first = chunkStart == 0
            var frameFlags: UInt8 = first ? flags & ~endHeaders : 0
            if chunkEnd == block.count { frameFlags |= endHeaders }
            let headerStart = buffer.writerIndex
            buffer.writeBytes(frame[..<headerCount])
            setLength(chunkEnd - chunkStart, ofFrameAt: headerStart, in: &buffer)
            buffer.setInteger(first ? headersType : continuationType, at: headerStart + 3)
            buffer.setInteger(frameFlags, at: headerStart + 4)
            buffer.writeBytes(block[chunkStart..<chunkEnd])
            chunkStart = chunkEnd
        }
    }

    private static func setLength(_ length: Int, ofFrameAt start: Int, in buffer: inout ByteBuffer) {
        buffer.setInteger(UInt8(truncatingIfNeeded: length >> 16), at: start)
        buffer.setInteger(UInt16(truncatingIfNeeded: length), at: start + 1)
    }

    private static func unexpected(_ what: String) -> NGHTTP2Error {
        NGHTTP2Error("writing \(what)", code: NGHTTP2_ERR_HEADER_COMP.rawValue)
    }
}
