/// What a cancel can pick a request by: the campaign its notification belongs to, if any, and the
/// id of the job it is part of. The batch's observer answers it for each index it hears
/// (`APNSBatchObserver.cancelKey(_:)`), so a cancel reaches every kind of work the same way.
public struct APNSCancelKey: Sendable, Hashable {
    public var campaign: String?
    public var job: String

    public init(campaign: String?, job: String) {
        self.campaign = campaign
        self.job = job
    }
}
