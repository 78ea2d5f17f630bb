import SAMImport
import SAMTensor
import Testing

/// How one import's canonical tensors compare with a reference import's, computed here
/// (independently of `ImportMerge`) so the merge rules are checked, not assumed.
struct WeightComparison: CustomStringConvertible {
    var onlyInCandidate: [String] = []
    var onlyInReference: [String] = []
    var bitExact: [String] = []
    /// Tensors that differ, with their largest absolute and relative element difference.
    var differing: [(name: String, maxAbs: Double, maxRel: Double, referenceRule: ImportRule, candidateRule: ImportRule)] = []

    /// Compares the tensors of `components` (every component when nil) whose names `include` accepts.
    init(_ candidate: ImportedWeights, against reference: ImportedWeights, components: Set<SAMComponent>? = nil,
         where include: (String) -> Bool = { _ in true }) {
        func keep(_ name: String) -> Bool {
            include(name) && (components.map { SAMComponent.of(name).map($0.contains) ?? false } ?? true)
        }
        let mine = Set(candidate.names.filter(keep)), theirs = Set(reference.names.filter(keep))
        onlyInCandidate = mine.subtracting(theirs).sorted()
        onlyInReference = theirs.subtracting(mine).sorted()
        for name in mine.intersection(theirs).sorted() {
            let (a, b) = (candidate.tensors[name]!, reference.tensors[name]!)
            if a.tensor.isBitwiseEqual(to: b.tensor) { bitExact.append(name); continue }
            var maxAbs = Double.infinity, maxRel = Double.infinity
            if a.tensor.shape == b.tensor.shape {
                maxAbs = 0; maxRel = 0
                for index in 0..<a.tensor.elementCount {
                    let (x, y) = (a.tensor.value(at: index), b.tensor.value(at: index))
                    maxAbs = max(maxAbs, abs(x - y))
                    if x != y { maxRel = max(maxRel, abs(x - y) / max(abs(x), abs(y))) }
                }
            }
            differing.append((name, maxAbs, maxRel, b.origin.rule, a.origin.rule))
        }
    }

    var sameKeys: Bool { onlyInCandidate.isEmpty && onlyInReference.isEmpty }
    var worst: (name: String, maxAbs: Double, maxRel: Double)? {
        differing.max { $0.maxAbs < $1.maxAbs }.map { ($0.name, $0.maxAbs, $0.maxRel) }
    }
    var worstRelative: (name: String, maxAbs: Double, maxRel: Double)? {
        differing.max { $0.maxRel < $1.maxRel }.map { ($0.name, $0.maxAbs, $0.maxRel) }
    }

    var description: String {
        var text = "\(bitExact.count) bit-exact, \(differing.count) differ"
        if let worst { text += "; largest abs \(worst.maxAbs) (rel \(worst.maxRel)) at \(worst.name)" }
        if let worstRelative { text += "; largest rel \(worstRelative.maxRel) at \(worstRelative.name)" }
        if !onlyInCandidate.isEmpty { text += "; only in candidate: \(onlyInCandidate.prefix(5))" }
        if !onlyInReference.isEmpty { text += "; only in reference: \(onlyInReference.prefix(5))" }
        return text
    }

    /// The usual expectation: same keys; every tensor bit-exact except BatchNorm-folded convs (folded
    /// here in double precision vs by the exporter in float32), which must be within `foldTolerance` (absolute).
    func expectMatches(foldTolerance: Double = 1e-6, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(onlyInCandidate.isEmpty, "only in candidate: \(onlyInCandidate)", sourceLocation: sourceLocation)
        #expect(onlyInReference.isEmpty, "only in reference: \(onlyInReference)", sourceLocation: sourceLocation)
        for entry in differing {
            #expect(entry.referenceRule == .foldBatchNorm, "\(entry.name) differs (max abs \(entry.maxAbs)) but was not folded",
                    sourceLocation: sourceLocation)
            #expect(entry.maxAbs <= foldTolerance,
                    "\(entry.name): max abs \(entry.maxAbs), max rel \(entry.maxRel)", sourceLocation: sourceLocation)
        }
    }
}
