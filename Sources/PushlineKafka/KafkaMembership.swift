/// What a consumer knows about its place in the group, for an operator: its member id (nil
/// before it joined) and the last rebalance event it saw ("assigned 4", "revoked 4", "lost 4").
public struct KafkaMembership: Sendable, Hashable {
    public var memberID: String?
    public var lastRebalance: String?
    public var sinceLastRebalance: Duration?

    public init(memberID: String?, lastRebalance: String?, sinceLastRebalance: Duration?) {
        self.memberID = memberID
        self.lastRebalance = lastRebalance
        self.sinceLastRebalance = sinceLastRebalance
    }
}
