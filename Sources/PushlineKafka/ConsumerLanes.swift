/// The consumer's two lanes as its machine sees them: the records handed to the reader and not
/// read yet, since when each buffer has been full, whether each lane's partitions are paused at
/// librdkafka, the user's pause of the bulk lane, and whether the poll thread may be waiting for
/// room in the bulk buffer. `ConsumerStateMachine` looks at it once per turn of the poll loop
/// (`look`) and tells it what was handed out, read and paused.
struct ConsumerLanes: Sendable {
    /// What one look of the poll thread found.
    struct Look: Sendable {
        /// Room in the bulk buffer (zero or less: full).
        var bulkRoom: Int
        /// The bulk queue may wait for a record: it had nothing at the last look, and there is room.
        var bulkWaits: Bool
        /// Whether each lane's partitions should be paused now.
        var bulkPaused: Bool
        var priorityPaused: Bool
    }

    private(set) var bulk = ConsumerLaneState()
    private(set) var priority = ConsumerLaneState()
    /// `KafkaConsumer.pause()`: the bulk lane stays paused.
    private(set) var userPaused = false
    /// The bulk buffer was full at the last look, so the poll thread may be waiting on the
    /// consumer queue: the next `read` of bulk records should wake it.
    private var bufferWaiting = false
    /// The bulk queue had nothing at the last look.
    private var bulkIdle = false

    /// Records of `lane` were handed to the reader.
    mutating func handedOut(_ count: Int, lane: ConsumerLane) {
        switch lane {
        case .bulk: bulk.buffered += count
        case .priority: priority.buffered += count
        }
    }

    /// The reader took `count` records of `lane`; true when the poll thread should be woken (the
    /// bulk buffer has room again, and it may sit out its poll timeout otherwise).
    mutating func read(_ count: Int, lane: ConsumerLane) -> Bool {
        switch lane {
        case .priority:
            priority.buffered -= count
            return false
        case .bulk:
            bulk.buffered -= count
            guard bufferWaiting else { return false }
            bufferWaiting = false
            return true
        }
    }

    mutating func setUserPaused(_ paused: Bool) {
        userPaused = paused
    }

    /// The poll thread's look at `now`; `bulkTaken`: how many records its last look at the bulk
    /// queue took (nil: it did not look). A buffer holds up to `limit` records; one full for
    /// `pauseAfter` pauses its lane (`Settings.fullPauseAfter`).
    mutating func look(bulkTaken: Int?, now: ContinuousClock.Instant, limit: Int, pauseAfter: Duration) -> Look {
        if let bulkTaken { bulkIdle = bulkTaken == 0 }
        let room = limit - bulk.buffered
        bufferWaiting = room <= 0
        let bulkFullLong = bulk.observe(full: room <= 0, now: now, pauseAfter: pauseAfter)
        let priorityFullLong = priority.observe(full: priority.buffered >= limit, now: now, pauseAfter: pauseAfter)
        return Look(
            bulkRoom: room,
            bulkWaits: room > 0 && bulkIdle,
            bulkPaused: userPaused || bulkFullLong,
            priorityPaused: priorityFullLong
        )
    }

    func isFetchPaused(_ lane: ConsumerLane) -> Bool {
        switch lane {
        case .bulk: bulk.fetchPaused
        case .priority: priority.fetchPaused
        }
    }

    /// Fetching of `lane` (both when nil) was paused or resumed.
    mutating func setFetchPaused(_ paused: Bool, lane: ConsumerLane?) {
        if lane != .priority { bulk.fetchPaused = paused }
        if lane != .bulk { priority.fetchPaused = paused }
    }
}
