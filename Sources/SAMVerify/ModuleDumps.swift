import Foundation
import SAMFiles
import SAMFormats
import SAMModel
import SAMTensor

/// Per-module PyTorch outputs (forward-hook dumps) of one run, in execution order.
///
/// From a manifest (`module_outputs` rows: `module`, `call`, `file`, and `same_as` where a byte-identical
/// output is stored once): the rows are in the order the modules finished, repeated calls included.
/// From a folder without manifest rows: `<path>.npy` for a module's first call and `<path>#<k>.npy` for
/// call k, in the order the native run reports them.
public struct ModuleDumps: Sendable {
    public struct Row: Sendable, Equatable {
        public var module: String
        public var call: Int
        /// Relative to the set's root.
        public var file: String
    }

    struct Key: Hashable {
        var module: String
        var call: Int
    }

    /// Where the rows came from, for the reports.
    public let source: String
    /// Execution order; empty when the dumps are read from a folder.
    public let rows: [Row]
    /// The dump folder relative to the set's root, when there are no manifest rows.
    public let folder: String?
    private let index: [Key: Int]

    init(rows json: [JSONValue], source: String) {
        var rows: [Row] = []
        for row in json {
            guard let module = row["module"]?.stringValue, let file = row["file"]?.stringValue else { continue }
            rows.append(Row(module: module, call: Int(row["call"]?.numberValue ?? 0), file: file))
        }
        var index: [Key: Int] = [:]
        for (position, row) in rows.enumerated() where index[Key(module: row.module, call: row.call)] == nil {
            index[Key(module: row.module, call: row.call)] = position
        }
        self.rows = rows
        self.index = index
        self.source = source
        folder = nil
    }

    init(folder: String) {
        rows = []
        index = [:]
        self.folder = folder
        source = folder + "/ (file names; order as the native run reports)"
    }

    /// The dump of `module`'s call `call`: its position in the execution order (nil for folder dumps)
    /// and its file relative to `root`; nil when there is none (modules PyTorch hooks do not see, such as
    /// the synthetic `path:keys` reports, and modules not dumped).
    func lookup(module: String, call: Int, root: String) -> (order: Int?, file: String)? {
        if let folder {
            let file = folder + "/" + module + (call == 0 ? "" : "#\(call)") + ".npy"
            return FileManager.default.fileExists(atPath: root + "/" + file) ? (nil, file) : nil
        }
        guard let position = index[Key(module: module, call: call)] else { return nil }
        return (position, rows[position].file)
    }
}

/// One module's native output against its PyTorch dump.
public struct ModuleCheck: Codable, Sendable, Equatable {
    public var module: String
    /// 0 for the first call of a module, k for its (k+1)-th (a dump `<path>#k.npy`).
    public var call: Int
    public var file: String
    /// Position in the execution order the walk follows.
    public var order: Int
    /// pass, fail (values, shape or non-finite output), or bad_input (dump unreadable or non-finite).
    public var status: CheckStatus
    public var problem: String?
    public var shape: [Int]
    public var referenceShape: [Int]?
    public var figures: ErrorFigures?
    /// The tolerance this module was held to: the case's, or the manifest's `tolerances.modules.<module>`.
    public var tolerance: Tolerance?

    /// "module" or "module#k".
    public var label: String { call == 0 ? module : "\(module)#\(call)" }
}

/// The first module whose output diverges from PyTorch in a failing case's run, or why there is none.
public struct Divergence: Codable, Sendable, Equatable {
    /// The run the dumps belong to ("image encoder on references/input_image.npy").
    public var run: String
    public var dumpSource: String?
    /// True when a dumped module's output fails the element rule (or its shape differs).
    public var located: Bool
    public var module: String?
    public var call: Int?
    public var file: String?
    public var figures: ErrorFigures?
    public var problem: String?
    public var tolerance: Tolerance?
    public var note: String
    /// Dumped modules compared, and how many of them pass before the first failing one.
    public var modulesCompared: Int
    public var modulesPassingBefore: Int
    /// Dump rows whose file no reported module was compared with (a module the native run lacks or names
    /// differently); rows sharing a file with a compared module (`same_as` aliases) are covered.
    public var notReported: [String]
    /// Every comparison, in execution order.
    public var modules: [ModuleCheck]

    /// A case whose reference set has no dumps for it.
    static func unavailable(run: String, note: String) -> Divergence {
        Divergence(run: run, dumpSource: nil, located: false, note: note, modulesCompared: 0, modulesPassingBefore: 0,
                   notReported: [], modules: [])
    }

    /// "image_encoder.layers.1.blocks.0.mlp.fc1 (max abs 3.1e-01, ...)" or the note.
    public var summary: String {
        guard located, let module else { return note }
        let name = (call ?? 0) == 0 ? module : "\(module)#\(call!)"
        if let problem { return "\(name): \(problem)" }
        guard let figures else { return name }
        return "\(name): max abs \(formatFigure(figures.maxAbs)), mean abs \(formatFigure(figures.meanAbs)), "
            + "median abs \(formatFigure(figures.medianAbs)), max rel \(formatFigure(figures.maxRel)), "
            + "\(figures.failing) of \(figures.count) elements fail, worst at \(formatIndex(figures.worstIndex)) "
            + "(\(formatFigure(figures.worstOutput)) vs \(formatFigure(figures.worstReference)))"
    }
}

/// Compares every module output a native run reports with its dump as the run goes (so no activation
/// is kept), then names the first one, in execution order, that fails under the case's tolerance.
final class ModuleWalk {
    let dumps: ModuleDumps
    let references: ReferenceSet
    var root: String { references.root }
    let tolerance: Tolerance
    /// Per-module overrides of `tolerance` (`tolerances.modules` of a calibrated manifest).
    let moduleTolerances: [String: ToleranceOverride]
    private(set) var checks: [ModuleCheck] = []
    private var calls: [String: Int] = [:]
    private var observed = 0

    init(dumps: ModuleDumps, references: ReferenceSet, tolerance: Tolerance, moduleTolerances: [String: ToleranceOverride] = [:]) {
        self.dumps = dumps
        self.references = references
        self.tolerance = tolerance
        self.moduleTolerances = moduleTolerances
    }

    /// The tolerance module `path` is held to.
    func tolerance(for path: String) -> Tolerance {
        guard let override = moduleTolerances[path] else { return tolerance }
        return Tolerance(atol: override.atol ?? tolerance.atol, rtol: override.rtol ?? tolerance.rtol)
    }

    var observer: ModuleObserver { { [self] path, output in observe(path, output) } }

    func observe(_ path: String, _ output: FloatTensor) {
        let call = calls[path, default: 0]
        calls[path] = call + 1
        observed += 1
        guard let (order, file) = dumps.lookup(module: path, call: call, root: root) else { return }
        let tolerance = tolerance(for: path)
        var check = ModuleCheck(module: path, call: call, file: file, order: order ?? observed, status: .pass,
                                shape: output.shape, tolerance: tolerance)
        defer { checks.append(check) }
        let reference: Tensor
        // The manifest names the file: it must stay inside the set (no absolute path, `..` or link out).
        do { reference = try NPY.read(try references.resolve(file).get()) } catch {
            check.status = .badInput
            check.problem = "dump unreadable: \(error)"
            return
        }
        check.referenceShape = reference.shape
        guard reference.shape == output.shape else {
            check.status = .fail
            check.problem = "shape \(Shape.text(output.shape)), PyTorch \(Shape.text(reference.shape))"
            return
        }
        let values = reference.floats()
        if let nonFinite = NonFiniteSummary(values, shape: reference.shape) {
            check.status = .badInput
            check.problem = "the dump holds \(nonFinite)"
            return
        }
        let figures = ErrorFigures(output: output.data, reference: values, shape: output.shape, tolerance: tolerance)
        check.figures = figures
        check.status = figures.passes ? .pass : .fail
        if figures.nonFinite > 0 { check.problem = "the native output holds NaN or infinite values" }
    }

    func divergence(run: String) -> Divergence {
        let ordered = checks.sorted { $0.order < $1.order }
        // A row is covered when its file was compared under some reported module: byte-identical outputs
        // share a file (`same_as`), e.g. a Conv2d_BN and its `.bn`, which the native port reports once.
        let compared = Set(checks.map(\.file))
        let notReported = dumps.rows.filter { !compared.contains($0.file) }
            .map { $0.call == 0 ? $0.module : "\($0.module)#\($0.call)" }
        var result = Divergence(run: run, dumpSource: dumps.source, located: false, tolerance: tolerance, note: "",
                                modulesCompared: ordered.count, modulesPassingBefore: 0, notReported: notReported,
                                modules: ordered)
        let unreadable = ordered.filter { $0.status == .badInput }
        if let first = ordered.firstIndex(where: { $0.status == .fail }) {
            let check = ordered[first]
            result.located = true
            result.module = check.module
            result.call = check.call
            result.file = check.file
            result.figures = check.figures
            result.problem = check.problem
            result.modulesPassingBefore = ordered[..<first].filter { $0.status == .pass }.count
            result.note = "first module in execution order whose output fails \(check.tolerance ?? tolerance): \(check.label) "
                + "(\(result.modulesPassingBefore) dumped module\(result.modulesPassingBefore == 1 ? "" : "s") before it pass)"
        } else if ordered.isEmpty {
            result.note = "the native run reported no module that has a dump in \(dumps.source)"
        } else {
            result.note = "all \(ordered.count) dumped modules pass \(tolerance): the divergence lies after the last "
                + "dumped module or outside this run"
        }
        if !unreadable.isEmpty {
            result.note += "; \(unreadable.count) dump\(unreadable.count == 1 ? "" : "s") could not be used ("
                + unreadable.prefix(3).map { "\($0.label): \($0.problem ?? "")" }.joined(separator: "; ") + ")"
        }
        if !notReported.isEmpty {
            result.note += "; \(notReported.count) dumped module\(notReported.count == 1 ? " was" : "s were") never reported by "
                + "the native run (first: \(notReported[0]))"
        }
        return result
    }
}
