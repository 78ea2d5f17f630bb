import Foundation
import SAMBLAS
import SAMFiles
import SAMFormats
import SAMKernels
import SAMParallel
import SAMTensor

/// Every native output of a run written to a folder, for a determinism run to compare bit for bit:
/// `dump.json` (the cases, how this process ran: worker threads, BLAS kernels) and
/// `cases/<index>/<output>.npy`. Full-size masks are recorded as SHA-256 digests only (a full-size set's are
/// megabytes a case).
public final class OutputDump {
    public let folder: String
    private var entries: [JSONValue] = []
    private var problem: String?

    /// `folder` must not exist or be empty: it is the run's own.
    public init(folder: String) throws(VerifyError) {
        self.folder = folder
        let contents = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        guard contents.isEmpty else {
            throw VerifyError(.outputRefused, "--dump-outputs \(folder) is not empty; nothing was written")
        }
        do { try FileManager.default.createDirectory(atPath: folder + "/cases", withIntermediateDirectories: true) } catch {
            throw VerifyError(.writeFailed, "--dump-outputs \(folder): \(error)")
        }
    }

    /// Writes `artifacts`' native outputs (an observer for `Verifier.verify`).
    public func record(_ artifacts: CaseArtifacts) {
        let index = entries.count
        let caseFolder = "cases/\(index)"
        var outputs: [String: JSONValue] = [:]
        do {
            try FileManager.default.createDirectory(atPath: folder + "/" + caseFolder, withIntermediateDirectories: true)
            for (name, tensor) in artifacts.native.sorted(by: { $0.key < $1.key }) {
                let file = caseFolder + "/" + name + ".npy"
                try NPY.write(tensor.tensor, to: folder + "/" + file)
                outputs[name] = .string(file)
            }
        } catch {
            problem = problem ?? "cannot write \(folder)/\(caseFolder): \(error)"
        }
        var entry: [String: JSONValue] = ["name": .string(artifacts.name), "outputs": .object(outputs),
                                          "status": .string(artifacts.result.status.rawValue)]
        if let masks = artifacts.nativeMasks {
            entry["full_size_masks_sha256"] = .string(masks.values.withUnsafeBytes { SHA256.hex($0) })
        }
        entries.append(.object(entry))
    }

    /// Writes `dump.json`; throws when any output could not be written.
    public func finish() throws(VerifyError) {
        if let problem { throw VerifyError(.writeFailed, "--dump-outputs: \(problem)") }
        let environment = ProcessInfo.processInfo.environment
        let manifest: JSONValue = .object([
            "workers": .number(Double(Workers.count)),
            "blas": .string(BLAS.backendDescription),
            "sam_num_threads": environment["SAM_NUM_THREADS"].map(JSONValue.string) ?? .null,
            "openblas_coretype": environment["OPENBLAS_CORETYPE"].map(JSONValue.string) ?? .null,
            "cpu_cap": .string(CPUCap.current.rawValue),
            "linear_kernel": .string(Kernels.float32LinearKernel.rawValue),
            "cases": .array(entries),
        ])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do { try encoder.encode(manifest).write(to: URL(fileURLWithPath: folder + "/dump.json")) } catch {
            throw VerifyError(.writeFailed, "--dump-outputs \(folder)/dump.json: \(error)")
        }
    }
}
