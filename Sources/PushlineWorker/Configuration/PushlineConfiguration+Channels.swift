import PushlineAPNS

extension PushlineConfiguration {
    /// Where app `name` manages its broadcast channels, and the key that decided it: the app's
    /// `channels_endpoint`, else `apns.channels_endpoint`, else the channel hosts of the app's
    /// push environment (`endpoint`, else `apns.endpoint`). Nil when the text there is not an
    /// endpoint (validation reports it) or there is no such app.
    public func channelsEndpoint(app name: String) -> (endpoint: APNSEndpoint, key: String)? {
        guard let app = apps[name] else { return nil }
        if !app.channelsEndpoint.isEmpty {
            return APNSEndpoint(channels: app.channelsEndpoint).map { ($0, "apps.\(name).channels_endpoint") }
        }
        if !apns.channelsEndpoint.isEmpty {
            return APNSEndpoint(channels: apns.channelsEndpoint).map { ($0, "apns.channels_endpoint") }
        }
        let (push, key) = app.endpoint.isEmpty ? (apns.endpoint, "apns.endpoint") : (app.endpoint, "apps.\(name).endpoint")
        return APNSEndpoint(push).map { ($0.channelManagement, key) }
    }
}
