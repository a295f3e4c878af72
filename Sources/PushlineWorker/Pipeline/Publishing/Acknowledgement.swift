/// Who hears that a result record is safe in Kafka.
///
/// Most records are a token's only record, counted by its job's (or group's) progress: that case
/// holds the progress itself, so such a record needs no closure (one allocation per result less).
enum Acknowledgement: Sendable {
    case token(ResultDelivery)
    case call(@Sendable () -> Void)

    func callAsFunction() {
        switch self {
        case .token(let progress): progress.acknowledged()
        case .call(let acknowledged): acknowledged()
        }
    }
}
