import Foundation
import SAMBLAS
import SAMKernels
import SAMTestSupport
import Testing

/// The tools start with OpenBLAS's kernels for the CPU's ISA where the library picked an older
/// ISA's (OpenBLAS 0.3.21 takes a 5th-generation Xeon for Prescott), with Haswell's on Zen 4 (512-bit
/// operations in two halves), and leave a user's OPENBLAS_CORETYPE as it is; SAM_CPU_CAP holds them
/// to an older CPU's. Read from `samverify --dump-outputs`, which records the kernels it ran.
@Suite("Tools: OpenBLAS kernel choice")
struct BLASKernelChoiceTests {
    /// The `dump.json` samverify writes for the image encoder case, run in `environment`.
    func dumpManifest(environment: [String: String], folder: String, model: String) throws -> [String: Any] {
        let dump = folder + "/dump-\(environment["OPENBLAS_CORETYPE"] ?? "unset")-\(environment["SAM_CPU_CAP"] ?? "uncapped")"
        let run = try samverifyTool.run([model, "--references", TestPaths.tinyReferences, "--case", "image_encoder",
                                         "--dump-outputs", dump, "--quiet"], environment: environment)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dump + "/dump.json")))
                            as? [String: Any])
    }

    /// The OpenBLAS core a dump's run used.
    static func core(_ manifest: [String: Any]) throws -> String {
        let blas = try #require(manifest["blas"] as? String)
        return try #require(blas.components(separatedBy: "core: ").last?.components(separatedBy: ",").first)
    }

    /// A folder with the tiny model, and this process's environment without OPENBLAS_CORETYPE.
    func setUp(_ name: String) throws -> (folder: String, model: String, environment: [String: String]) {
        let folder = try temporaryFolder(name)
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "OPENBLAS_CORETYPE")
        return (folder, try ModelUnderTest.tiny(in: folder), environment)
    }

    @Test("without OPENBLAS_CORETYPE: the stronger kernels where the library picked an older ISA's, else the library's pick; with it: the given kernels")
    func kernelChoice() throws {
        #if !canImport(Accelerate)
        let (folder, model, unset) = try setUp("blas-core")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let chosen = try Self.core(dumpManifest(environment: unset, folder: folder, model: model))
        // This test process may itself run under OPENBLAS_CORETYPE (CI's AVX2 pass); what the library
        // picks on its own is then unknown here, so only a stronger pick is checked.
        if ProcessInfo.processInfo.environment["OPENBLAS_CORETYPE"] == nil {
            let ownPick = BLAS.backendDescription.components(separatedBy: "core: ").last?.components(separatedBy: ",").first
            #expect(chosen == (BLAS.strongerOpenBLASCore ?? ownPick), "tool ran \(chosen); library's own pick \(ownPick ?? "?")")
            if Self.isZen4 && ProcessInfo.processInfo.environment["SAM_CPU_CAP"] == nil {
                #expect(chosen == "Haswell", "Zen 4 ran \(chosen)'s kernels")
            }
        }
        #expect(!BLAS.preAVX2Cores.contains(chosen.lowercased()) || BLAS.cpuKernelFamily == nil,
                "a CPU that runs \(BLAS.cpuKernelFamily ?? "")'s kernels ran \(chosen)'s")
        var given = unset
        given["OPENBLAS_CORETYPE"] = "Prescott"
        #expect(try Self.core(dumpManifest(environment: given, folder: folder, model: model)) == "Prescott")
        #endif
    }

    /// Whether /proc/cpuinfo names an AMD family 25 CPU with AVX-512F: Zen 4 (Zen 3, also family 25,
    /// has no AVX-512).
    static var isZen4: Bool {
        guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return false }
        let first = info.components(separatedBy: "\n\n").first ?? ""
        func field(_ name: String) -> String? {
            first.split(separator: "\n").first { $0.hasPrefix(name) }
                .flatMap { $0.split(separator: ":", maxSplits: 1).last }
                .map { $0.trimmingCharacters(in: .whitespaces) }
        }
        return field("vendor_id") == "AuthenticAMD" && field("cpu family") == "25"
            && (field("flags")?.split(separator: " ").contains("avx512f") ?? false)
    }

    @Test("the fastest kernel family is Haswell's on Zen 4 alone, told apart by /proc/cpuinfo")
    func zen4() {
        #if !canImport(Accelerate) && os(Linux)
        let capped = ProcessInfo.processInfo.environment["SAM_CPU_CAP"] != nil
        #expect((BLAS.fastestKernelFamily == "Haswell" && BLAS.cpuKernelFamily == "SkylakeX") == (Self.isZen4 && !capped),
                "fastest \(BLAS.fastestKernelFamily ?? "none"), widest \(BLAS.cpuKernelFamily ?? "none")")
        #endif
    }

    /// SAM_CPU_CAP=avx2 runs the kernels of a CPU without AVX-512 (Haswell's in OpenBLAS, the AVX2 panel
    /// product for float32 linear layers, which every CPU here with AVX-512 also has) and says so; a value
    /// it does not know stops the tool before it starts.
    @Test("SAM_CPU_CAP=avx2: OpenBLAS's Haswell kernels and the AVX2 panel product, recorded in the dump; an unknown value is exit 2")
    func capped() throws {
        #if !canImport(Accelerate)
        var (folder, model, environment) = try setUp("cpu-cap")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        environment["SAM_CPU_CAP"] = "avx2"
        let manifest = try dumpManifest(environment: environment, folder: folder, model: model)
        #expect(manifest["cpu_cap"] as? String == "avx2")
        // The AVX2 product wherever this process has a panel product: AVX-512 CPUs have AVX2 and FMA too.
        #expect(manifest["linear_kernel"] as? String == (Kernels.panelKernelAvailable ? "panels" : "blas"))
        let core = try Self.core(manifest)
        #expect(!BLAS.avx512Cores.contains(core.lowercased()), "capped at AVX2, OpenBLAS ran \(core)'s kernels")

        environment["SAM_CPU_CAP"] = "avx1024"
        let refused = try samverifyTool.run([model, "--references", TestPaths.tinyReferences, "--quiet"], environment: environment)
        #expect(refused.status == 2 && refused.stderr.contains("SAM_CPU_CAP='avx1024'"), "\(refused.status): \(refused.stderr)")
        #endif
    }
}

/// The worker pool is sized from the CPUs the process may run on (its affinity mask), not the CPUs
/// the machine has: `taskset -c 0` makes one worker.
@Suite("Tools: workers from the affinity mask")
struct WorkerAffinityTests {
    @Test("samverify under taskset -c 0 runs one worker")
    func oneCPU() throws {
        let taskset = "/usr/bin/taskset"
        guard FileManager.default.isExecutableFile(atPath: taskset) else { return }
        let folder = try temporaryFolder("affinity")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: taskset)
        process.arguments = ["-c", "0", try samverifyTool.path(), model, "--references", TestPaths.tinyReferences,
                             "--case", "image_encoder", "--dump-outputs", folder + "/dump", "--quiet"]
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "SAM_NUM_THREADS")
        process.environment = environment
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/dump/dump.json")))
                                    as? [String: Any])
        #expect(manifest["workers"] as? Int == 1, "\(manifest["workers"] ?? "none")")
    }
}
