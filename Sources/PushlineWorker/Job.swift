import PushlineAPNSCore

/// One validated send job: a notification to one or many device tokens, or one broadcast to a
/// channel (`channelID`, iOS 18; then `tokens` is empty and `pushType` is `liveactivity`).
///
/// `payload` holds the job's payload bytes exactly as they appeared in the record.
public struct Job: Sendable, Hashable {
    /// The fields, in one immutable allocation every copy shares: the pipeline copies a job into
    /// its progress, its group members and its records' template, and a copy costs one retain
    /// instead of one per field (ten of them). Setting a field makes a new box; only the decoder
    /// and tests set fields. The consumer carries a job read on its poll thread as its box
    /// (`JobRecordReader`).
    private(set) var box: Box

    /// The job whose fields `box` holds.
    init(box: Box) {
        self.box = box
    }

    public var id: String {
        get { box.contents.id }
        set {
            update {
                $0.id = newValue
                if $0.derivedCollapseID != nil { $0.derivedCollapseID = DerivedCollapseID.of(jobID: newValue) }
            }
        }
    }
    /// The device tokens' bytes, as the record gave them (no `String` per token).
    /// Setting tokens of another count leaves a personalised job plain (its variables were its
    /// tokens'): `narrowed(to:)` keeps them.
    public var deviceTokens: APNSDeviceTokens {
        get { box.contents.deviceTokens }
        set {
            update {
                if $0.deviceTokens.count != newValue.count { $0.personalisation = nil }
                $0.deviceTokens = newValue
            }
        }
    }
    /// The device tokens as strings (made on each read; the pipeline uses `deviceTokens`).
    public var tokens: [String] {
        get { (0..<deviceTokens.count).map { deviceTokens.token(at: $0) } }
        set { deviceTokens = APNSDeviceTokens(newValue) }
    }
    /// The broadcast channel; nil for a job to device tokens.
    public var channelID: String? {
        get { box.contents.channelID }
        set {
            update {
                $0.channelID = newValue
                // A broadcast never carries a collapse id (Apple refuses it).
                if newValue != nil { $0.derivedCollapseID = nil }
            }
        }
    }
    public var app: String {
        get { box.contents.app }
        set { update { $0.app = newValue } }
    }
    public var topic: String {
        get { box.contents.topic }
        set { update { $0.topic = newValue } }
    }
    public var pushType: APNSPushType {
        get { box.contents.pushType }
        set { update { $0.pushType = newValue } }
    }
    public var priority: APNSPriority {
        get { box.contents.priority }
        set { update { $0.priority = newValue } }
    }
    /// `apns-expiration`, unix seconds.
    public var expiration: Int64? {
        get { box.contents.expiration }
        set { update { $0.expiration = newValue } }
    }
    /// The job's own `collapse_id`.
    public var collapseID: String? {
        get { box.contents.collapseID }
        set { update { $0.collapseID = newValue } }
    }
    /// The `apns-collapse-id` the job's requests carry: its own `collapseID`, which always wins,
    /// else the one derived from its id when it was made with `collapseDuplicates`
    /// (`DerivedCollapseID`); nil for a broadcast.
    public var requestCollapseID: String? {
        box.contents.collapseID ?? box.contents.derivedCollapseID
    }
    public var payload: [UInt8] {
        get { box.contents.payload }
        set { update { $0.payload = newValue } }
    }
    /// Not sent, nor retried, after this (unix milliseconds).
    public var deadlineMilliseconds: Int64? {
        get { box.contents.deadlineMilliseconds }
        set { update { $0.deadlineMilliseconds = newValue } }
    }
    /// The sender's own `meta` object, its bytes exactly as they appeared in the record; copied
    /// into every result record of the job. Nil when the job has none.
    public var meta: [UInt8]? {
        get { box.contents.echo.meta }
        set { update { $0.echo.meta = newValue } }
    }

    /// What every record of the job repeats of it after its own fields (`campaign`, `meta`).
    public var echo: JobEcho {
        get { box.contents.echo }
        set { update { $0.echo = newValue } }
    }

    /// A rehearsal (`dry_run`, or every job of a worker with `worker.dry_run`): the job is
    /// decoded, validated and rendered like any other, and each token ends with `status 0,
    /// reason "dry_run"` where its request would have gone to APNs (`JobPipeline.start`).
    public var dryRun: Bool {
        get { box.contents.dryRun }
        set { update { $0.dryRun = newValue } }
    }

    /// The sender's `campaign` (1...128 bytes): echoed in every record of the job, and what a
    /// cancel of the campaign names (`Cancellations`). Nil when the job has none.
    public var campaign: String? {
        get { box.contents.echo.campaign }
        set { update { $0.echo.campaign = newValue } }
    }

    /// A personalised job's template and its tokens' variables; nil for a plain job (its payload
    /// is sent as written).
    var personalisation: Personalisation? {
        get { box.contents.personalisation }
        set { update { $0.personalisation = newValue } }
    }

    /// Whether the job is personalised (`personalisation`).
    var isPersonalised: Bool { box.contents.personalisation != nil }

    /// The job for its tokens `indices` only (ascending), a personalised job's variables with
    /// them: a job resumed with its unanswered tokens.
    func narrowed(to indices: [Int]) -> Job {
        let all = deviceTokens
        var narrowed = self
        narrowed.update {
            $0.deviceTokens = APNSDeviceTokens(indices.map { all.token(at: $0) })
            $0.personalisation = $0.personalisation?.narrowed(to: indices)
        }
        return narrowed
    }

    private mutating func update(_ change: (inout Contents) -> Void) {
        var contents = box.contents
        change(&contents)
        box = Box(contents)
    }

    public static func == (a: Job, b: Job) -> Bool {
        a.box === b.box || a.box.contents == b.box.contents
    }

    public func hash(into hasher: inout Hasher) {
        box.contents.hash(into: &hasher)
    }

    /// `collapseDuplicates`: the job's requests carry a collapse id derived from `id` when it
    /// has none of its own and is not a broadcast (`requestCollapseID`, `DerivedCollapseID`).
    public init(
        id: String,
        tokens: [String],
        app: String,
        topic: String,
        pushType: APNSPushType,
        priority: APNSPriority,
        expiration: Int64? = nil,
        collapseID: String? = nil,
        payload: [UInt8],
        deadlineMilliseconds: Int64? = nil,
        channelID: String? = nil,
        meta: [UInt8]? = nil,
        campaign: String? = nil,
        collapseDuplicates: Bool = false
    ) {
        self.init(
            id: id,
            deviceTokens: APNSDeviceTokens(tokens),
            app: app,
            topic: topic,
            pushType: pushType,
            priority: priority,
            expiration: expiration,
            collapseID: collapseID,
            payload: payload,
            deadlineMilliseconds: deadlineMilliseconds,
            channelID: channelID,
            echo: JobEcho(campaign: campaign, meta: meta),
            collapseDuplicates: collapseDuplicates
        )
    }

    /// `collapseDuplicates`: the job's requests carry a collapse id derived from `id` when it
    /// has none of its own and is not a broadcast (`requestCollapseID`, `DerivedCollapseID`).
    public init(
        id: String,
        deviceTokens: APNSDeviceTokens,
        app: String,
        topic: String,
        pushType: APNSPushType,
        priority: APNSPriority,
        expiration: Int64? = nil,
        collapseID: String? = nil,
        payload: [UInt8],
        deadlineMilliseconds: Int64? = nil,
        channelID: String? = nil,
        echo: JobEcho = .none,
        collapseDuplicates: Bool = false
    ) {
        box = Box(
            Contents(
                id: id,
                deviceTokens: deviceTokens,
                channelID: channelID,
                app: app,
                topic: topic,
                pushType: pushType,
                priority: priority,
                expiration: expiration,
                collapseID: collapseID,
                derivedCollapseID: collapseDuplicates && collapseID == nil && channelID == nil
                    ? DerivedCollapseID.of(jobID: id) : nil,
                payload: payload,
                deadlineMilliseconds: deadlineMilliseconds,
                echo: echo
            )
        )
    }

    /// What each result of the job is about: its device tokens, or its one channel.
    public var recipients: [String] {
        channelID.map { [$0] } ?? tokens
    }

    /// How many results the job has: one per device token, or one for its channel.
    public var recipientCount: Int {
        channelID == nil ? deviceTokens.count : 1
    }
}
