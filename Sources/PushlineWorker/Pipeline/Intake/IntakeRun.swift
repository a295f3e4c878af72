/// How many of a poll batch's next records the intake takes as one run: records while the
/// in-flight gate has room for their notifications, at least one, the last one allowed to take
/// the gate past its limit (as one job always could). Pure: the intake feeds it the weights of
/// the records it decodes, one at a time.
struct IntakeRun {
    private var room: Int
    private(set) var count = 0

    /// `room`: the gate's limit minus the notifications in flight.
    init(room: Int) {
        self.room = room
    }

    /// Whether the run takes another record (always its first).
    var wantsMore: Bool { count == 0 || room > 0 }

    /// A record of `weight` notifications joins the run.
    mutating func add(weight: Int) {
        room -= weight
        count += 1
    }
}
