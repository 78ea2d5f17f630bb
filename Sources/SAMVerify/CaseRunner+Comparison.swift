import Foundation
import SAMFormats
import SAMModel
import SAMTensor

/// Reading inputs and references, and comparing an output with its reference under the resolved tolerance.
extension CaseRunner {
    struct RunError: Error, CustomStringConvertible {
        let description: String
        init(_ error: Error) { description = "\(error)" }
    }

    /// Output `output` (reported name, reference base name) of a run against its reference file:
    /// the reference must be readable and finite (else bad input), then shape, dtype, values. A reference
    /// that was read is kept in `comparedReferences` (and both sides for the observer).
    func compare(_ run: Result<FloatTensor, some Error>, _ referenceCase: ReferenceCase, _ output: (String, String),
                 path: String, seconds: Double, dtype: DType = .float32) -> OutputCheck {
        var result = check(referenceCase, output, path, status: .pass, problem: nil)
        result.seconds = seconds
        let referenceFile = referenceCase.file(output.1)
        guard referenceCase.has(output.1) else {
            result.status = .notApplicable
            result.missingReference = true
            result.problem = "reference \(referenceFile) is missing, so \(output.0) was not compared"
            return result
        }
        if let problem = toleranceOverLimit(result.tolerance) {
            result.status = .badInput
            result.problem = problem
            return result
        }
        let reference: Tensor
        do { reference = try NPY.read(try references.resolve(referenceFile).get()) } catch {
            result.status = .badInput
            result.problem = "reference \(referenceFile) unreadable: \(error)"
            return result
        }
        result.referenceShape = reference.shape
        result.referenceDType = reference.dtype.rawValue
        let referenceValues = reference.floats()
        if let nonFinite = NonFiniteSummary(referenceValues, shape: reference.shape) {
            result.status = .badInput
            result.problem = "reference \(referenceFile) holds \(nonFinite): a non-finite reference never passes"
            return result
        }
        let referenceTensor = FloatTensor(shape: reference.shape, data: referenceValues)
        comparedReferences[output.0] = referenceTensor
        keep(output.0, native: try? run.get(), reference: referenceTensor)
        let actual: FloatTensor
        switch run {
        case .failure(let error):
            result.status = .fail
            result.problem = "the model could not run this case's inputs: \(error)"
            return result
        case .success(let value): actual = value
        }
        result.shape = actual.shape
        result.dtype = dtype.rawValue
        guard actual.shape == reference.shape else {
            result.status = .fail
            result.problem = "shape mismatch: native \(Shape.text(actual.shape)), reference \(Shape.text(reference.shape))"
            return result
        }
        guard reference.dtype == dtype else {
            result.status = .fail
            result.problem = "dtype mismatch: native \(dtype.rawValue), reference \(reference.dtype.rawValue)"
            return result
        }
        let figures = ErrorFigures(output: actual.data, reference: referenceValues, shape: actual.shape,
                                   tolerance: result.tolerance.tolerance)
        result.figures = figures
        result.status = figures.passes ? .pass : .fail
        if figures.nonFinite > 0 { result.problem = "the native output holds NaN or infinite values (\(figures.nonFinite) elements)" }
        return result
    }

    /// A check with no figures yet.
    func check(_ referenceCase: ReferenceCase, _ output: (String, String), _ path: String, status: CheckStatus,
               problem: String?) -> OutputCheck {
        OutputCheck(output: output.0, path: path, reference: referenceCase.file(output.1), status: status, problem: problem,
                    tolerance: tolerance(referenceCase, output: output), seconds: 0)
    }

    /// A check standing for a whole case or path that has nothing to compare.
    func placeholder(_ referenceCase: ReferenceCase, output: String = "(case)", path: String = "(case)",
                     status: CheckStatus, problem: String) -> OutputCheck {
        OutputCheck(output: output, path: path, reference: referenceCase.folder, status: status, problem: problem,
                    tolerance: tolerance(referenceCase, output: nil), seconds: 0)
    }

    /// Why a check's tolerance may not be used: a manifest asks for more than --max-atol/--max-rtol allow.
    func toleranceOverLimit(_ resolved: ResolvedTolerance) -> String? {
        var problems: [String] = []
        if let limit = options.maxAtol, resolved.atol > limit {
            problems.append("atol \(formatFigure(resolved.atol)) (\(resolved.atolSource)) is more than --max-atol \(formatFigure(limit))")
        }
        if let limit = options.maxRtol, resolved.rtol > limit {
            problems.append("rtol \(formatFigure(resolved.rtol)) (\(resolved.rtolSource)) is more than --max-rtol \(formatFigure(limit))")
        }
        return problems.isEmpty ? nil : "the reference set asks for a looser bar than allowed: " + problems.joined(separator: "; ")
    }

    /// defaults < manifest `tolerances` < its `outputs.<output>` < the case's < the case's output's < the
    /// command line ("manifest" reads "tolerance file" under `--tolerances`).
    func tolerance(_ referenceCase: ReferenceCase, output: (String, String)?) -> ResolvedTolerance {
        let source = references.toleranceSource
        var resolved = ResolvedTolerance.defaults.applying(references.setTolerance, source: source)
        if let output, let name = [output.1, output.0].first(where: { references.setOutputTolerances[$0] != nil }) {
            resolved = resolved.applying(references.setOutputTolerances[name]!, source: "\(source) output \(name)")
        }
        resolved = resolved.applying(referenceCase.tolerance, source: "\(source) case \(referenceCase.name)")
        if let output {
            for name in [output.1, output.0] {
                if let override = referenceCase.outputTolerances[name] {
                    resolved = resolved.applying(override, source: "\(source) case \(referenceCase.name) output \(name)")
                    break
                }
            }
        }
        return resolved.applying(ToleranceOverride(atol: options.atol, rtol: options.rtol), source: "command line")
    }

    // MARK: - Inputs

    /// An input file as float32 values; missing, unreadable or non-finite is a problem (bad input).
    func loadInput(_ relative: String) -> Result<FloatTensor, InputProblem> {
        let tensor: Tensor
        do { tensor = try NPY.read(try references.resolve(relative).get()) } catch {
            return .failure(InputProblem(message: "input \(relative) unreadable: \(error)"))
        }
        let values = tensor.floats()
        if let nonFinite = NonFiniteSummary(values, shape: tensor.shape) {
            return .failure(InputProblem(message: "input \(relative) holds \(nonFinite)"))
        }
        return .success(FloatTensor(shape: tensor.shape, data: values))
    }

    /// `tensor` (read from `file`) has shape `expected`, or the problem naming both.
    static func shape(_ tensor: FloatTensor, of file: String, is expected: [Int]) -> Result<Void, InputProblem> {
        tensor.shape == expected ? .success(())
            : .failure(InputProblem(message: "input \(file) has shape \(Shape.text(tensor.shape)), expected \(Shape.text(expected))"))
    }

    /// Prompt inputs as SamOnnxModel takes them: coordinates [1, N, 2], labels [1, N] of -1, 0, 1, 2 or 3.
    static func checkPrompt(points: FloatTensor, pointsFile: String, labels: FloatTensor, labelsFile: String) throws(InputProblem) {
        guard points.shape.count == 3, points.shape[0] == 1, points.shape[1] >= 1, points.shape[2] == 2 else {
            throw InputProblem(message: "input \(pointsFile) has shape \(Shape.text(points.shape)), expected [1,N,2]")
        }
        guard labels.shape == [1, points.shape[1]] else {
            throw InputProblem(message: "input \(labelsFile) has shape \(Shape.text(labels.shape)), expected [1,\(points.shape[1])] "
                               + "(one label per point of \(pointsFile))")
        }
        if let bad = labels.data.firstIndex(where: { ![-1, 0, 1, 2, 3].contains($0) }) {
            throw InputProblem(message: "input \(labelsFile) holds label \(labels.data[bad]) at [0,\(bad)]; labels are -1, 0, 1, 2 or 3")
        }
    }

    func require(_ referenceCase: ReferenceCase, _ name: String) throws(InputProblem) -> FloatTensor {
        guard referenceCase.has(name) else { throw InputProblem(message: "input \(referenceCase.file(name)) is missing") }
        return try loadInput(referenceCase.file(name)).get()
    }

    func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }
}
