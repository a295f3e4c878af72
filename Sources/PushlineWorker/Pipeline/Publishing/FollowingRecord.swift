import PushlineKafka

/// A record that must follow a job's token records in their partition, reported as a value by
/// the job's progress once those are produced (`ResultDelivery.tokensProduced`): its `job_done`.
/// The publisher publishes it, with the progress as its delivery.
struct FollowingRecord {
    var topic: KafkaTopic
    /// The job id: the key of the job's delivery records too (the same partition, after them).
    var key: String
    var summary: ResultRecord.JobDone
}
