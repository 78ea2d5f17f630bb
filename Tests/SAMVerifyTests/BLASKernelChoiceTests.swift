import Foundation
import SAMBLAS
import SAMTestSupport
import Testing

/// The tools start with OpenBLAS's kernels for the CPU's ISA where the library picked an older
/// ISA's (OpenBLAS 0.3.21 takes a 5th-generation Xeon for Prescott), and leave a user's
/// OPENBLAS_CORETYPE as it is. Read from `samverify --dump-outputs`, which records the kernels it ran.
@Suite("Tools: OpenBLAS kernel choice")
struct BLASKernelChoiceTests {
    /// The core samverify ran on, in `environment`.
    func toolCore(environment: [String: String], folder: String, model: String) throws -> String {
        let dump = folder + "/dump-\(environment["OPENBLAS_CORETYPE"] ?? "unset")"
        let run = try samverifyTool.run([model, "--references", TestPaths.tinyReferences, "--case", "image_encoder",
                                         "--dump-outputs", dump, "--quiet"], environment: environment)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dump + "/dump.json")))
                                    as? [String: Any])
        let blas = try #require(manifest["blas"] as? String)
        return try #require(blas.components(separatedBy: "core: ").last?.components(separatedBy: ",").first)
    }

    @Test("without OPENBLAS_CORETYPE: the stronger kernels where the library picked an older ISA's, else the library's pick; with it: the given kernels")
    func kernelChoice() throws {
        #if canImport(Accelerate)
        return
        #else
        let folder = try temporaryFolder("blas-core")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        var unset = ProcessInfo.processInfo.environment
        unset.removeValue(forKey: "OPENBLAS_CORETYPE")
        let chosen = try toolCore(environment: unset, folder: folder, model: model)
        // This test process may itself run under OPENBLAS_CORETYPE (CI's AVX2 pass); what the library
        // picks on its own is then unknown here, so only a stronger pick is checked.
        if ProcessInfo.processInfo.environment["OPENBLAS_CORETYPE"] == nil {
            let ownPick = BLAS.backendDescription.components(separatedBy: "core: ").last?.components(separatedBy: ",").first
            #expect(chosen == (BLAS.strongerOpenBLASCore ?? ownPick), "tool ran \(chosen); library's own pick \(ownPick ?? "?")")
        }
        #expect(!BLAS.preAVX2Cores.contains(chosen.lowercased()) || BLAS.cpuKernelFamily == nil,
                "a CPU that runs \(BLAS.cpuKernelFamily ?? "")'s kernels ran \(chosen)'s")
        var given = unset
        given["OPENBLAS_CORETYPE"] = "Prescott"
        #expect(try toolCore(environment: given, folder: folder, model: model) == "Prescott")
        #endif
    }
}

/// SAM_CPU_CAP=avx2 runs the kernels of a CPU without AVX-512 (Haswell's in OpenBLAS, the BLAS for
/// float32 linear layers instead of the AVX-512 panel product) and says so; a value it does not know
/// stops the tool before it starts.
@Suite("Tools: SAM_CPU_CAP")
struct CPUCapTests {
    @Test("avx2: OpenBLAS's Haswell kernels and no panel product, recorded in the dump; an unknown value is exit 2")
    func capped() throws {
        #if canImport(Accelerate)
        return
        #else
        let folder = try temporaryFolder("cpu-cap")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try ModelUnderTest.tiny(in: folder)
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "OPENBLAS_CORETYPE")
        environment["SAM_CPU_CAP"] = "avx2"
        let run = try samverifyTool.run([model, "--references", TestPaths.tinyReferences, "--case", "image_encoder",
                                         "--dump-outputs", folder + "/dump", "--quiet"], environment: environment)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/dump/dump.json")))
                                    as? [String: Any])
        #expect(manifest["cpu_cap"] as? String == "avx2")
        #expect(manifest["linear_kernel"] as? String == "blas")
        let blas = try #require(manifest["blas"] as? String)
        let core = try #require(blas.components(separatedBy: "core: ").last?.components(separatedBy: ",").first)
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
