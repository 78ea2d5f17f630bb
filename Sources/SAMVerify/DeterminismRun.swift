import Foundation
import SAMFormats
import SAMTensor

/// Runs samverify itself in child processes, one per configuration (SAM_NUM_THREADS, OPENBLAS_CORETYPE,
/// both read once when a process starts, so a configuration needs its own process), each writing its
/// native outputs (`--dump-outputs`), and compares them with the first configuration's bit for bit.
public enum DeterminismRun {
    /// The configurations to run.
    public struct Plan: Sendable, Equatable {
        /// Worker thread counts; the first is the baseline's.
        public var threadCounts: [Int]
        /// OPENBLAS_CORETYPE values besides OpenBLAS's own choice, each run with every thread count.
        public var kernelPaths: [String]

        public init(threadCounts: [Int], kernelPaths: [String]) {
            self.threadCounts = threadCounts
            self.kernelPaths = kernelPaths
        }

        /// 1, 2 and all online CPUs (SAM_NUM_THREADS cannot ask for more: Workers clamps to them); where
        /// OpenBLAS picks kernels at run time on x86-64, its AVX2 (Haswell) and SSE3 (Prescott, the portable
        /// baseline) kernels besides its own choice.
        public static var standard: Plan {
            let online = max(1, ProcessInfo.processInfo.activeProcessorCount)
            var counts: [Int] = []
            for count in [1, 2, online] where count <= online && !counts.contains(count) { counts.append(count) }
            #if arch(x86_64) && os(Linux)
            let flags = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
            let avx2 = flags.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).contains("avx2")
            return Plan(threadCounts: counts, kernelPaths: avx2 ? ["Haswell", "Prescott"] : ["Prescott"])
            #else
            return Plan(threadCounts: counts, kernelPaths: [])
            #endif
        }
    }

    /// The largest difference another kernel path may make in each output: the atol its checks use.
    public struct Bounds: Sendable, Equatable {
        public var byOutput: [String: Double]
        /// For an output no check names.
        public var fallback: Double

        public init(byOutput: [String: Double], fallback: Double) {
            self.byOutput = byOutput
            self.fallback = fallback
        }

        /// The strictest atol each output's checks use in `report`.
        public init(_ report: VerificationReport) {
            var byOutput: [String: Double] = [:]
            for (_, check) in report.checks where check.figures != nil {
                byOutput[check.output] = min(byOutput[check.output] ?? .infinity, check.tolerance.atol)
            }
            self.init(byOutput: byOutput, fallback: byOutput.values.min() ?? Tolerance.defaults.atol)
        }

        public func bound(_ output: String) -> Double { byOutput[output] ?? fallback }
    }

    /// Runs `executable arguments... --dump-outputs DIR --quiet --no-divergence` per configuration and
    /// compares. `bounds` are the largest differences a kernel path may make (the atol in use).
    public static func run(executable: String, arguments: [String], plan: Plan, bounds: Bounds,
                           progress: (String) -> Void = { _ in }) throws(VerifyError) -> DeterminismReport {
        let scratch: String
        do { scratch = try makeScratchFolder() } catch { throw VerifyError(.writeFailed, "--determinism: \(error)") }
        defer { try? FileManager.default.removeItem(atPath: scratch) }

        var configurations: [DeterminismReport.Configuration] = []
        /// Runs one configuration in a child process and reads its dump back.
        func execute(threads: Int, kernelPath: String?) throws(VerifyError) -> (dump: Dump, label: String, status: Int32) {
            let label = "\(threads) thread\(threads == 1 ? "" : "s")" + (kernelPath.map { ", \($0) kernels" } ?? "")
            progress("determinism: \(label)")
            let folder = scratch + "/run-\(configurations.count)"
            let started = ContinuousClock.now
            let status = try launch(executable, arguments + ["--dump-outputs", folder, "--quiet", "--no-divergence"],
                                    threads: threads, kernelPath: kernelPath, label: label)
            let elapsed = ContinuousClock.now - started
            let dump = try Dump(folder: folder, label: label)
            configurations.append(.init(label: label, threads: threads, workers: dump.workers, kernelPath: kernelPath,
                                        blas: dump.blas, exitCode: status,
                                        seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18))
            return (dump, label, status)
        }

        var differences: [DeterminismReport.Difference] = []
        let counts = plan.threadCounts.isEmpty ? [1] : plan.threadCounts
        let most = counts.max()!
        var baseline: (dump: Dump, label: String, status: Int32)?
        // Every thread count on every kernel path: the thread rule holds on each path (whose kernels cut
        // differently), a path's 1-thread run is compared with the baseline's under the kernel-path rule.
        for kernelPath in [nil] + plan.kernelPaths.map(Optional.some) {
            var first: (dump: Dump, label: String, status: Int32)?
            var mostRun: (dump: Dump, label: String, status: Int32)?
            var pathDifferences: [Int] = []
            for threads in counts {
                let run = try execute(threads: threads, kernelPath: kernelPath)
                if threads == most { mostRun = run }
                if let first {
                    pathDifferences.append(differences.count)
                    differences.append(compare(run.dump, with: first.dump, label: run.label, kind: "threads", bounds: nil,
                                               exitCode: run.status))
                    continue
                }
                first = run
                if let baseline {
                    // A kernel path OpenBLAS maps to the baseline's own kernels is held to the thread rule.
                    let same = run.dump.core == baseline.dump.core
                    differences.append(compare(run.dump, with: baseline.dump, label: run.label, kind: same ? "threads" : "kernel path",
                                               bounds: same ? nil : bounds, exitCode: run.status))
                } else {
                    baseline = run
                }
            }
            // Outputs that change with the thread count: a second run with the most threads tells a race (the
            // outputs change from run to run) from work cut by the thread count (the same every time it runs).
            guard pathDifferences.contains(where: { differences[$0].status == .fail }), let mostRun else { continue }
            let again = try execute(threads: most, kernelPath: kernelPath)
            configurations[configurations.count - 1].label += ", again"
            var check = compare(again.dump, with: mostRun.dump, label: again.label + ", again", kind: "threads", bounds: nil,
                                exitCode: again.status)
            check.kind = "repeat"
            check.note = check.elementsDiffering == 0 && check.maskCasesDiffering == 0 ? "bit-identical to the first run"
                : "differs from the first run with the same threads (a race): " + check.note
            differences.append(check)
            guard check.status == .pass else { continue }
            for index in pathDifferences where differences[index].status == .fail {
                excuse(&differences[index], bounds: bounds, core: again.dump.core ?? "the BLAS's own", threads: most)
            }
        }
        let failed = differences.contains { $0.status != .pass }
        return DeterminismReport(baseline: baseline?.label ?? "", configurations: configurations,
                                 differences: differences, status: failed ? .fail : .pass, rule: DeterminismReport.rule)
    }

    /// Turns a thread-count difference that repeats exactly into the bounded exception: still a failure
    /// when an output moves by more than its bound or the run does not pass the set.
    static func excuse(_ difference: inout DeterminismReport.Difference, bounds: Bounds, core: String, threads: Int) {
        let reason = "repeatable (a second run with \(threads) threads is bit-identical to the first), so no race: the kernels "
            + "cut work by the worker count (Kernels.gemm's per-worker blocks, the attention kernels' query-row blocks) and "
            + "OpenBLAS's \(core) sgemm rounds a product differently by its shape"
        difference.exception = reason
        difference.exceeding = exceeding(difference.outputMaxAbs, bounds)
        difference.bound = difference.worstOutput.map(bounds.bound) ?? bounds.fallback
        let within = difference.exceeding.isEmpty && !difference.note.contains("does NOT pass")
        difference.status = within ? .pass : .fail
        difference.note += within ? "; bounded exception (each output within its atol): \(reason)"
            : "; \(difference.exceeding.joined(separator: ", ")) over its atol for this exception: \(reason)"
    }

    /// Outputs whose largest difference is over their bound.
    static func exceeding(_ maxima: [String: Double], _ bounds: Bounds) -> [String] {
        maxima.filter { !($0.value <= bounds.bound($0.key)) }.keys.sorted()
    }

    /// `candidate` against `reference`, output by output, bit for bit.
    static func compare(_ candidate: Dump, with reference: Dump, label: String, kind: String, bounds: Bounds?,
                        exitCode: Int32) -> DeterminismReport.Difference {
        var result = DeterminismReport.Difference(
            configuration: label, against: reference.label, core: candidate.core, kind: kind, outputsCompared: 0,
            outputsDiffering: 0, elementsCompared: 0, elementsDiffering: 0,
            maxAbs: 0, worst: nil, maskCasesDiffering: 0, bound: 0, status: .pass, note: "")
        var problems: [String] = []
        for name in reference.order {
            guard let entry = reference.cases[name], let other = candidate.cases[name] else {
                problems.append("case \(name) missing from this run")
                continue
            }
            if entry.masksDigest != other.masksDigest { result.maskCasesDiffering += 1 }
            for (output, file) in entry.outputs.sorted(by: { $0.key < $1.key }) {
                guard let otherFile = other.outputs[output],
                      let a = try? NPY.read(reference.folder + "/" + file), let b = try? NPY.read(candidate.folder + "/" + otherFile) else {
                    problems.append("\(name)/\(output) missing or unreadable in one run")
                    continue
                }
                result.outputsCompared += 1
                guard a.shape == b.shape else {
                    problems.append("\(name)/\(output) has shape \(Shape.text(b.shape)) here, \(Shape.text(a.shape)) in the baseline")
                    result.outputsDiffering += 1
                    continue
                }
                let x = a.floats(), y = b.floats()
                var differing = 0
                for index in x.indices where x[index].bitPattern != y[index].bitPattern {
                    differing += 1
                    let gap = Double(abs(x[index] - y[index]))
                    if gap > result.maxAbs || (gap.isNaN && !result.maxAbs.isNaN) {
                        result.maxAbs = gap
                        result.worst = "\(name)/\(output)"
                        result.worstOutput = output
                    }
                    if !(gap <= result.outputMaxAbs[output] ?? 0) { result.outputMaxAbs[output] = gap }
                }
                result.elementsCompared += x.count
                result.elementsDiffering += differing
                if differing > 0 { result.outputsDiffering += 1 }
            }
        }
        let identical = result.elementsDiffering == 0 && result.maskCasesDiffering == 0 && problems.isEmpty
        if kind == "threads" {
            result.status = identical ? .pass : .fail
            result.note = identical ? "bit-identical"
                : "differs: \(result.elementsDiffering) of \(result.elementsCompared) elements in "
                    + "\(result.outputsDiffering) outputs, max abs \(formatFigure(result.maxAbs)) (\(result.worst ?? "-")), "
                    + "full-size masks of \(result.maskCasesDiffering) cases"
                    + (exitCode == 0 ? "" : "; this run does NOT pass the set (exit \(exitCode))")
        } else {
            let bounds = bounds ?? Bounds(byOutput: [:], fallback: 0)
            result.exceeding = exceeding(result.outputMaxAbs, bounds)
            result.bound = result.worstOutput.map(bounds.bound) ?? bounds.fallback
            let within = result.exceeding.isEmpty && problems.isEmpty && exitCode == 0
            result.status = within ? .pass : .fail
            result.note = identical ? "bit-identical"
                : "\(result.elementsDiffering) of \(result.elementsCompared) elements differ, max abs \(formatFigure(result.maxAbs)) "
                    + "(\(result.worst ?? "-"), whose atol is \(formatFigure(result.bound))), full-size masks of "
                    + "\(result.maskCasesDiffering) cases"
                    + (result.exceeding.isEmpty ? "; every output within its atol"
                       : "; OVER their atol: " + result.exceeding.joined(separator: ", "))
                    + (exitCode == 0 ? "; this run passes the set" : "; this run does NOT pass the set (exit \(exitCode))")
        }
        if !problems.isEmpty { result.note += "; " + problems.prefix(3).joined(separator: "; ") }
        return result
    }

    /// One child's dump, read back.
    struct Dump {
        struct Case {
            var outputs: [String: String]
            var masksDigest: String?
        }
        let folder: String
        /// The configuration that made it.
        let label: String
        let workers: Int?
        let blas: String?
        /// OPENBLAS_CORETYPE as the child had it.
        let kernelPath: String?
        /// OpenBLAS's core name, from `blas` ("... core: Haswell, threads: 1").
        let core: String?
        let cases: [String: Case]
        /// Case names in run order.
        let order: [String]

        init(folder: String, label: String) throws(VerifyError) {
            self.folder = folder
            self.label = label
            let json = try ReferenceSet.readJSON(folder + "/dump.json", label: "--determinism (\(label))")
            workers = json["workers"]?.numberValue.map { Int($0) }
            kernelPath = json["openblas_coretype"]?.stringValue
            blas = json["blas"]?.stringValue
            core = blas.flatMap { text in
                text.range(of: "core: ").map { String(text[$0.upperBound...].prefix { $0 != "," }) }
            }
            var cases: [String: Case] = [:], order: [String] = []
            for entry in json["cases"]?.arrayValue ?? [] {
                guard let name = entry["name"]?.stringValue else { continue }
                var outputs: [String: String] = [:]
                for (output, file) in entry["outputs"]?.objectValue ?? [:] {
                    if let file = file.stringValue, !file.hasPrefix("/"), !file.split(separator: "/").contains("..") {
                        outputs[output] = file
                    }
                }
                cases[name] = Case(outputs: outputs, masksDigest: entry["full_size_masks_sha256"]?.stringValue)
                order.append(name)
            }
            self.cases = cases
            self.order = order
        }
    }

    /// Starts the child and waits; exit 2 (bad input or usage), a signal or a missing dump is bad input.
    static func launch(_ executable: String, _ arguments: [String], threads: Int, kernelPath: String?,
                       label: String) throws(VerifyError) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["SAM_NUM_THREADS"] = String(threads)
        environment["OPENBLAS_CORETYPE"] = kernelPath
        process.environment = environment
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        do { try process.run() } catch {
            throw VerifyError(.usage, "--determinism: cannot start \(executable): \(error)")
        }
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let status = process.terminationStatus
        if process.terminationReason == .uncaughtSignal || status > 1 {
            let text = String(decoding: message, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw VerifyError(.unreadableReferences, "--determinism: the run with \(label) "
                              + (process.terminationReason == .uncaughtSignal ? "died of signal \(status)" : "exited \(status)")
                              + (text.isEmpty ? "" : ": " + text.split(separator: "\n").suffix(3).joined(separator: " | ")))
        }
        return status
    }

    static func makeScratchFolder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("samverify-determinism-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
