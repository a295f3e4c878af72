/// How the poll thread hands a batch of fetched records to the lanes' readers
/// (`ConsumerCore.flushPending`), apart from the I/O: each record is taken or dropped, and the
/// taken ones are split by lane, in the order they were fetched.
enum FetchedBatch {
    /// Calls `take` on each record, in order: it completes the record in place and names its
    /// lane, or returns nil to drop it. Leaves the bulk lane's records in `records`, moved to the
    /// front in place (swaps move, they do not copy: the array itself is then handed on), and
    /// returns the priority lane's.
    static func split<Record>(_ records: inout [Record], take: (inout Record) -> ConsumerLane?) -> [Record] {
        var bulk = 0
        var priority: [Record] = []
        for index in records.indices {
            switch take(&records[index]) {
            case .bulk?:
                if bulk != index { records.swapAt(bulk, index) }
                bulk += 1
            case .priority?:
                priority.append(records[index])
            case nil:
                break
            }
        }
        // Dropped and priority records are behind the bulk ones now.
        records.removeLast(records.count - bulk)
        return priority
    }
}
