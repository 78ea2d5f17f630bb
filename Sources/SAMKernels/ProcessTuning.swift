import SAMBLAS
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Kernels {
    /// Settings that make inference faster but change the whole process, so nothing in the
    /// package applies them on its own: the command-line tools call this at start-up, and an app
    /// calls it when the process is mostly this package's (a segmentation server); an app that
    /// uses OpenBLAS or tunes malloc for itself may leave it. Idempotent.
    ///
    /// - The BLAS runs on one thread and its idle worker threads are ended: the package's workers
    ///   (`Workers`, SAM_NUM_THREADS) split products themselves, and OpenBLAS's idle threads spin in
    ///   sched_yield between calls (on 2 cores they took ~18% of the CPU from the other loops, and a
    ///   core from the model load). OpenBLAS restarts its threads if something later raises the
    ///   count again.
    /// - glibc's malloc keeps freed memory for the next tensor instead of returning it to the
    ///   kernel. By default every allocation above 32 MB (a 256x256 map of 256 channels is 64 MB) is
    ///   a fresh mmap, so each layer's outputs are page-faulted in again: on a 2-core VM that was
    ///   635k page faults and ~13% of the CPU time of three encoder runs; with this, 63k and the same
    ///   peak RSS. No-op off glibc.
    public static func tuneProcessForInference() {
        runBLASOnOneThread()
        keepFreedMemoryForReuse()
    }

    /// For a command-line tool, first thing in `main`: starts the program again with OpenBLAS's
    /// kernels for this CPU's ISA where the library picked an older ISA's, with Haswell's on Zen 4
    /// (see `BLAS.restartWithStrongerKernelsIfNeeded`; OPENBLAS_CORETYPE, when set, is left as it is),
    /// or for the ISA SAM_CPU_CAP allows (`CPUCap`). A SAM_CPU_CAP it does not know ends the program
    /// with status 2 and a message naming the values it takes.
    public static func restartWithStrongerBLASKernelsIfNeeded() {
        if let problem = CPUCap.environmentProblem {
            let tool = CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? Substring($0)) } ?? "sam"
            let message = "\(tool): \(problem)\n"
            _ = message.withCString { write(2, $0, strlen($0)) }
            exit(2)
        }
        #if !canImport(Accelerate)
        BLAS.restartWithStrongerKernelsIfNeeded()
        #endif
    }

    /// The first half of `tuneProcessForInference`: the BLAS on one thread, its idle threads ended.
    public static func runBLASOnOneThread() {
        _ = blasOnOneThread
    }

    /// The second half of `tuneProcessForInference`: glibc's malloc keeps freed memory.
    public static func keepFreedMemoryForReuse() {
        _ = freedMemoryKept
    }

    /// Gives the pages of freed memory back to the kernel (glibc's `malloc_trim`) and keeps the
    /// address space. Under `keepFreedMemoryForReuse` the heap is never trimmed, so a long run whose
    /// temporaries change size leaves holes that later, larger requests do not fit, and RSS climbs
    /// with the run: samtrack on glibc after 88 frames held a 720 MiB heap of which 543 MiB were free
    /// chunks. Called between units of work (a video's frames), it bounds RSS by what is live at the
    /// price of faulting pages in again on their next use (samtrack links jemalloc instead; see
    /// docs/video.md). No-op off glibc.
    public static func returnFreedMemory() {
        #if canImport(Glibc)
        guard let trim = mallocTrim else { return }
        _ = trim(0)
        #endif
    }

    #if canImport(Glibc)
    // malloc_trim is declared in <malloc.h>, which the Glibc module does not export.
    private typealias MallocTrim = @convention(c) (Int) -> Int32
    private static let mallocTrim: MallocTrim? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim")
        .map { unsafeBitCast($0, to: MallocTrim.self) }
    #endif

    private static let blasOnOneThread: Void = {
        BLAS.setThreadCount(1)
        BLAS.stopIdleThreads()
    }()

    private static let freedMemoryKept: Void = {
        #if canImport(Glibc)
        // mallopt is declared in <malloc.h>, which the Glibc module does not export; look it
        // up instead. Option numbers are glibc's ABI (malloc.h).
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        let trimThreshold: Int32 = -1, topPad: Int32 = -2, mmapMax: Int32 = -4
        // Serve every size from the heap (no per-allocation mmap), never trim its top, and
        // grow it 64 MB at a time.
        _ = mallopt(mmapMax, 0)
        _ = mallopt(trimThreshold, Int32.max)
        _ = mallopt(topPad, 64 << 20)
        #endif
    }()
}
