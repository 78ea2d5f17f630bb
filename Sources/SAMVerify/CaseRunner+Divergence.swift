import SAMModel
import SAMTensor

/// Re-running a case's dumped run module by module: the first diverging module of a failing case, and
/// every module's figures for `--calibrate`.
extension CaseRunner {
    func locateDivergence(_ referenceCase: ReferenceCase, failedPaths: Set<String>) -> Divergence {
        let run = description(ofDumpedRun: referenceCase)
        if referenceCase.kind == .preprocess {
            return .unavailable(run: run, note: "preprocessing has no modules; each stage is compared on its own, "
                                + "from the set's previous stage")
        }
        if referenceCase.kind == .decoder, !failedPaths.contains("official") {
            return .unavailable(run: run, note: "only the split path failed; the module dumps are of the official path, "
                                + "which passed, so they cannot localise it")
        }
        guard referenceCase.dumps != nil else {
            let dumped = references.cases.filter { $0.dumps != nil }.map(\.name)
            return .unavailable(run: run, note: dumped.isEmpty
                ? "this reference set has no per-module dumps, so no module can be named"
                : "this reference set has no per-module dumps for case \(referenceCase.name) (it has them for "
                    + dumped.joined(separator: ", ") + ")")
        }
        switch walkModules(referenceCase) {
        case .failure(let note): return .unavailable(run: run, note: note.message)
        case .success(let walk): return walk.divergence(run: run)
        }
    }

    /// Every dumped module's figures, in execution order (empty when the run cannot be repeated).
    func measureModules(_ referenceCase: ReferenceCase) -> [ModuleCheck] {
        guard referenceCase.kind != .preprocess, case .success(let walk) = walkModules(referenceCase) else { return [] }
        return walk.checks.sorted { $0.order < $1.order }
    }

    func description(ofDumpedRun referenceCase: ReferenceCase) -> String {
        switch referenceCase.kind {
        case .imageEncoder: "image encoder on \(referenceCase.file("input_image"))"
        case .decoder: "official decoder path of case \(referenceCase.name) (on the reference image embeddings)"
        case .preprocess: "preprocessing stages of \(references.referencesPrefix)/"
        }
    }

    /// The case's dumped run repeated with the module observer comparing as it goes.
    func walkModules(_ referenceCase: ReferenceCase) -> Result<ModuleWalk, InputProblem> {
        guard let dumps = referenceCase.dumps else { return .failure(InputProblem(message: "no per-module dumps")) }
        let walk = ModuleWalk(dumps: dumps, references: references, tolerance: tolerance(referenceCase, output: nil).tolerance,
                              moduleTolerances: references.moduleTolerances)
        if referenceCase.kind == .imageEncoder {
            guard case .success(let image) = loadInput(referenceCase.file("input_image")) else {
                return .failure(InputProblem(message: "the input image could not be read"))
            }
            _ = try? sam.encodeImage(image, observer: walk.observer)
        } else {
            guard referenceCase.has("onnx_point_coords"), case .success(let inputs) = officialInputs(referenceCase),
                  case .success(let features) = imageFeatures else {
                return .failure(InputProblem(message: "the module dumps are of the official decoder path, which this case "
                                             + "cannot run; no module can be named"))
            }
            _ = try? runOfficialModel(inputs, features: features, observer: walk.observer)
        }
        return .success(walk)
    }
}
