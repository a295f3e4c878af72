import CJemalloc
import CPushlineMallocConf

/// The process's memory allocator: jemalloc, linked into the executable, with the options of
/// `CPushlineMallocConf` (fewer arenas, freed pages returned within a second).
///
/// The worker allocates on one thread (the consumer, the event loops) and frees on another (the
/// producer's delivery thread, the other loops) hundreds of thousands of times a second. glibc's
/// malloc returns such memory to the arena that made it under that arena's lock; jemalloc's
/// thread caches absorb it. Measured with `scripts/bench`: about a fifth less worker CPU per
/// notification. Asking jemalloc for its version also keeps the link from being dropped.
enum Allocator {
    /// "jemalloc <version> (<options>)", or nil when jemalloc does not answer (then glibc's malloc
    /// is in use).
    static var description: String? {
        var version: UnsafePointer<CChar>?
        var size = MemoryLayout<UnsafePointer<CChar>?>.size
        guard mallctl("version", &version, &size, nil, 0) == 0, let version else { return nil }
        var arenas: UInt32 = 0
        size = MemoryLayout<UInt32>.size
        let arenaCount = mallctl("opt.narenas", &arenas, &size, nil, 0) == 0 ? " narenas=\(arenas)" : ""
        // Whether the background thread runs (a jemalloc built without it ignores the option).
        var background = false
        size = MemoryLayout<Bool>.size
        let backgroundThread = mallctl("background_thread", &background, &size, nil, 0) == 0 ? " background_thread=\(background)" : ""
        return "jemalloc " + String(cString: version) + " (malloc_conf \"" + String(cString: pushline_malloc_conf()) + "\"" + arenaCount
            + backgroundThread + ")"
    }
}
