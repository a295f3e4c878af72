/// Who hears that a result record is safe in Kafka.
///
/// Most records are a token's only record, counted by its job's progress: that case holds the
/// progress itself, so such a record needs no closure (one allocation per result less).
enum Acknowledgement: Sendable {
    case token(JobProgress)
    case call(@Sendable () -> Void)

    func callAsFunction() {
        switch self {
        case .token(let progress): progress.tokenAcknowledged()
        case .call(let acknowledged): acknowledged()
        }
    }
}
