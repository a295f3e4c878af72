import CNGHTTP2
import NIOCore

/// The parts of an nghttp2 frame the handlers act on, copied out of the C union so handler code
/// never touches C types. Decoded only for frames the session reports (received, sent, not sent).
package enum NGHTTP2Frame {
    case headers(streamID: Int32, endStream: Bool, isRequest: Bool)
    case data(streamID: Int32, endStream: Bool)
    case settings(ack: Bool, maxConcurrentStreams: UInt32?)
    case ping(ack: Bool, opaque: UInt64)
    case goAway(HTTP2GoAway)
    case rstStream(streamID: Int32, errorCode: HTTP2ErrorCode)
    case other(type: UInt8, streamID: Int32)

    package init(_ frame: UnsafePointer<nghttp2_frame>) {
        let hd = frame.pointee.hd
        let endStream = hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        let ack = hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0
        switch UInt32(hd.type) {
        case NGHTTP2_HEADERS.rawValue:
            self = .headers(
                streamID: hd.stream_id,
                endStream: endStream,
                isRequest: frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST
            )
        case NGHTTP2_DATA.rawValue:
            self = .data(streamID: hd.stream_id, endStream: endStream)
        case NGHTTP2_SETTINGS.rawValue:
            var maxStreams: UInt32?
            let settings = frame.pointee.settings
            if let entries = settings.iv {
                for index in 0..<settings.niv
                where entries[index].settings_id == Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue) {
                    maxStreams = entries[index].value
                }
            }
            self = .settings(ack: ack, maxConcurrentStreams: maxStreams)
        case NGHTTP2_PING.rawValue:
            let opaque = withUnsafeBytes(of: frame.pointee.ping.opaque_data) { $0.loadUnaligned(as: UInt64.self) }
            self = .ping(ack: ack, opaque: UInt64(bigEndian: opaque))
        case NGHTTP2_GOAWAY.rawValue:
            let goaway = frame.pointee.goaway
            var debug = ByteBuffer()
            if let data = goaway.opaque_data, goaway.opaque_data_len > 0 {
                debug.writeBytes(UnsafeRawBufferPointer(start: data, count: goaway.opaque_data_len))
            }
            self = .goAway(
                HTTP2GoAway(
                    lastStreamID: goaway.last_stream_id,
                    errorCode: HTTP2ErrorCode(rawValue: goaway.error_code),
                    debugData: debug
                )
            )
        case NGHTTP2_RST_STREAM.rawValue:
            self = .rstStream(streamID: hd.stream_id, errorCode: HTTP2ErrorCode(rawValue: frame.pointee.rst_stream.error_code))
        default:
            self = .other(type: hd.type, streamID: hd.stream_id)
        }
    }
}
