#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Each thread's `ResultBatch`, in a POSIX thread-specific slot: read once per result record, so
/// it is one `pthread_getspecific`, with no box and no cast (NIO's `ThreadSpecificVariable` has
/// both). A thread's batch is released when the thread exits. One slot per publisher (a worker
/// has one); when the publisher goes, its key is deleted, and the batches of threads still
/// running are not freed (POSIX runs no destructor then): a test's leftover, 16 KiB or so each.
final class ThreadBatchSlot: Sendable {
    private let key: pthread_key_t

    init() {
        var key = pthread_key_t()
        let result = pthread_key_create(&key) { batch in
            guard let batch else { return }
            Unmanaged<ResultBatch>.fromOpaque(batch).release()
        }
        precondition(result == 0, "pthread_key_create failed: \(result)")
        self.key = key
    }

    deinit {
        pthread_key_delete(key)
    }

    /// The calling thread's batch, made on its first use.
    var batch: ResultBatch {
        if let stored = pthread_getspecific(key) {
            return Unmanaged<ResultBatch>.fromOpaque(stored).takeUnretainedValue()
        }
        let made = ResultBatch()
        pthread_setspecific(key, Unmanaged.passRetained(made).toOpaque())
        return made
    }

    /// The calling thread's batch if a run is open on it.
    var openBatch: ResultBatch? {
        guard let stored = pthread_getspecific(key) else { return nil }
        let batch = Unmanaged<ResultBatch>.fromOpaque(stored).takeUnretainedValue()
        return batch.isOpen ? batch : nil
    }
}
