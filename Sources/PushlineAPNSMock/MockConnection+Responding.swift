import NIOCore
import PushlineAPNSCore
import PushlineHTTP2
import PushlineHTTP2Server

/// Writing an answer: the response's header fields (the echoed or made-up id, the unique id,
/// the channel id) and its error body, encoded into the one reused field list, then counted in
/// the stats and written to the recorder when recording.
extension MockConnection {
    /// `received`: when the request arrived (unix ms), for the recorder.
    func respond(
        _ connection: HTTP2ServerHandler,
        _ request: HTTP2ServerRequest,
        _ answer: MockAnswer,
        outage: Bool,
        received: Int64
    ) {
        let status = answer.status
        let reason = answer.reason
        responseFields.removeAll()
        // The id the request came with, echoed (APNs makes one up when it had none): `apns-id`
        // for a push, `apns-request-id` for a broadcast or a channel-management request. A unique
        // value per response: indexing it in HPACK would only churn both dynamic tables.
        let idHeader = answer.api == .push ? "apns-id" : "apns-request-id"
        let echoed: Void? = request.withHeaderValue(named: idHeader) { id in
            responseFields.append(idHeader, value: id, neverIndex: true)
        }
        if echoed == nil {
            shared.ids.withNext { responseFields.append(idHeader, value: $0, neverIndex: true) }
        }
        // APNs' development environment sends apns-unique-id with every push; a delivered
        // broadcast gets one in every environment.
        if (answer.api == .push && configuration.uniqueIDs) || (answer.api == .broadcast && status == 200) {
            shared.ids.withNext { responseFields.append("apns-unique-id", value: $0, neverIndex: true) }
        }
        if let channelID = answer.channelID {
            responseFields.append("apns-channel-id", channelID, neverIndex: true)
        }
        var body: ByteBuffer?
        if let reason {
            body = ByteBuffer(string: APNSErrorBody.make(reason: reason.rawValue, timestamp: answer.timestamp))
            responseFields.append("content-type", "application/json")
        } else if let json = answer.body {
            body = ByteBuffer(string: json)
            responseFields.append("content-type", "application/json")
        }
        guard connection.respond(to: request.streamID, status: status, fields: responseFields, body: body) else { return }
        shared.stats.answered(status: status, reason: reason?.rawValue, counters: counters)
        if answer.api == .broadcast { shared.stats.broadcastAnswered(status: status) }
        if outage { shared.stats.outageAnswered() }
        if let recorder = shared.recorder {
            recorder.record(
                RequestRecorder.Entry(
                    connection: id,
                    stream: request.streamID,
                    token: Self.token(of: request.path),
                    headers: request.headers.filter { $0.name != "authorization" }.map { ($0.name, $0.value) },
                    neverIndexed: request.headers.filter(\.neverIndex).map(\.name),
                    payloadBytes: request.body?.readableBytes ?? 0,
                    payload: request.body.map { String(buffer: $0) } ?? "",
                    status: status,
                    reason: reason?.rawValue,
                    receivedMilliseconds: received,
                    answeredMilliseconds: RequestRecorder.nowMilliseconds()
                )
            )
        }
    }

    private static func token(of path: String) -> String {
        let prefix = "/3/device/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : ""
    }
}
