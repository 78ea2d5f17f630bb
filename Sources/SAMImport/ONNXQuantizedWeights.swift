import SAMFormats
import SAMTensor

/// Weights an ONNX file stores quantized, as onnxruntime's quantizer writes them: int8 or uint8
/// values `X_quantized` with a float scale and an integer zero point, per tensor or per output
/// channel, read by `MatMulInteger` / `ConvInteger` (quantize_dynamic: the scale multiplies the
/// integer product afterwards) or through `DequantizeLinear` (QDQ graphs). Each is dequantized at
/// import, w = (q - zero_point) * scale in double precision rounded once to float32, and then named
/// like the float weight it stands for.
struct ONNXQuantizedWeight {
    let stored: ONNXInitializer
    /// The float scale and integer zero point (nil: 0) as stored tensors.
    let scale: String
    let zeroPoint: String?
    /// The axis a per-channel scale runs along.
    let axis: Int
    /// Where the float graph would have read the weight: the integer op itself (consumer rules know
    /// MatMulInteger and ConvInteger), or what reads DequantizeLinear's output.
    let uses: [ONNXUse]
    /// The stored name without the quantizer's `_quantized` suffix.
    var baseName: String { stored.name.hasSuffix("_quantized") ? String(stored.name.dropLast("_quantized".count)) : stored.name }

    /// How the weight is stored, for provenance: "i8 per-channel (MatMulInteger)".
    let description: String
}

extension ONNXWeightMapper {
    /// Every quantized weight of the graph, by stored name. A weight whose scale cannot be found is an error.
    func findQuantizedWeights() throws(ImportError) -> [String: ONNXQuantizedWeight] {
        let stored = Dictionary(model.storedTensors.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var found: [String: ONNXQuantizedWeight] = [:]
        for (nodeIndex, node) in index.nodes.enumerated() {
            let weightInput: Int, zeroPointInput: Int, axis: Int
            switch node.opType {
            case "MatMulInteger": (weightInput, zeroPointInput, axis) = (1, 3, 1)  // B [K, N], per column
            case "ConvInteger": (weightInput, zeroPointInput, axis) = (1, 3, 0)    // W [O, C, kh, kw], per output channel
            case "DequantizeLinear": (weightInput, zeroPointInput, axis) = (0, 2, Self.axisAttribute(node))
            default: continue
            }
            guard node.inputs.count > weightInput, let weight = stored[node.inputs[weightInput]], found[weight.name] == nil else { continue }
            try requireDequantizable(weight, input: weightInput, of: node)
            let zeroPoint = node.inputs.count > zeroPointInput && !node.inputs[zeroPointInput].isEmpty ? node.inputs[zeroPointInput] : nil
            let scale: String?, uses: [ONNXUse]
            if node.opType == "DequantizeLinear" {
                scale = node.inputs.count > 1 ? node.inputs[1] : nil
                uses = node.outputs.first.map { index.uses(of: $0) } ?? []
            } else {
                scale = productScale(after: nodeIndex, stored: stored)
                uses = index.uses(of: weight.name).filter { $0.nodeIndex == nodeIndex }
            }
            if let scale, let type = stored[scale]?.elementType, type.dtype == nil {
                throw ImportError(.unsupportedQuantization, file: file, tensor: scale,
                                  "\(node.opType) '\(node.name)' scales '\(weight.name)' by a \(type.name) scale; the importer reads FLOAT "
                                    + "and FLOAT16 scales")
            }
            guard let scale, stored[scale]?.elementType.dtype?.isFloatingPoint == true else {
                throw ImportError(.invalidLayout, file: file, tensor: weight.name,
                                  "quantized weight read by \(node.opType) '\(node.name)': no stored float scale for it")
            }
            let perChannel = (stored[scale].map { $0.shape.reduce(1, *) } ?? 1) > 1
            let kind = "\(weight.elementType.description) \(perChannel ? "per-channel" : "per-tensor") (\(node.opType))"
            found[weight.name] = ONNXQuantizedWeight(stored: weight, scale: scale, zeroPoint: zeroPoint,
                                                     axis: axis, uses: uses, description: kind)
        }
        return found
    }

    /// int8 and uint8 weights, and the int32 biases QDQ graphs store (scale = input scale * weight
    /// scale), with one scale per tensor or per channel: what the importer dequantizes. Other data
    /// ONNX allows (int4, int16, float8) and blocked quantization are refused, never misread.
    static let dequantizedCodes: Set<Int32> = [2, 3, 6]

    private func requireDequantizable(_ weight: ONNXInitializer, input: Int, of node: ONNXNode) throws(ImportError) {
        guard Self.dequantizedCodes.contains(weight.elementType.code) else {
            throw ImportError(.unsupportedQuantization, file: file, tensor: weight.name,
                              "\(node.opType) '\(node.name)' input \(input) '\(weight.name)' is \(weight.elementType.name); the importer "
                                + "dequantizes INT8, UINT8 and INT32 data")
        }
        if case .int(let blockSize)? = node.attribute("block_size"), blockSize != 0 {
            throw ImportError(.unsupportedQuantization, file: file, tensor: weight.name,
                              "\(node.opType) '\(node.name)' quantizes '\(weight.name)' in blocks of \(blockSize); the importer "
                                + "dequantizes per tensor or per channel only")
        }
    }

    /// quantize_dynamic multiplies the integer product (after a Cast) by `activation scale * weight
    /// scale`: the stored float operand of that second product is the weight's scale.
    private func productScale(after nodeIndex: Int, stored: [String: ONNXInitializer]) -> String? {
        var frontier = index.nodes[nodeIndex].outputs
        for _ in 0..<3 {
            var next: [String] = []
            for value in frontier {
                for use in index.uses(of: value) {
                    if use.node.opType == "Cast" { next += use.node.outputs; continue }
                    guard use.node.opType == "Mul" else { continue }
                    let other = use.node.inputs[1 - use.input]
                    if stored[other] != nil { return other }
                    guard let producer = index.nodes.first(where: { $0.outputs.contains(other) }), producer.opType == "Mul" else { continue }
                    if let scale = producer.inputs.first(where: { stored[$0]?.elementType.dtype?.isFloatingPoint == true }) { return scale }
                }
            }
            frontier = next
        }
        return nil
    }

    static func axisAttribute(_ node: ONNXNode) -> Int {
        if case .int(let axis)? = node.attribute("axis") { return Int(axis) }
        return 1
    }

    /// (q - zero_point) * scale, per tensor or along `axis`, checked against the weight's shape.
    func dequantize(_ weight: ONNXQuantizedWeight) throws(ImportError) -> Tensor {
        let values = try readRaw(weight.stored.name), scale = try readRaw(weight.scale)
        let zeroPoint = try weight.zeroPoint.map { name throws(ImportError) in try readRaw(name) }
        let shape = values.shape
        let axis = weight.axis < 0 ? weight.axis + shape.count : weight.axis
        let channels = scale.elementCount
        if let zeroPoint, zeroPoint.elementCount != channels {
            throw ImportError(.invalidLayout, file: file, tensor: weight.stored.name,
                              "\(channels) scale(s) but \(zeroPoint.elementCount) zero point(s)")
        }
        guard channels == 1 || (axis >= 0 && axis < shape.count && shape[axis] == channels) else {
            throw ImportError(.invalidLayout, file: file, tensor: weight.stored.name,
                              "\(channels) scales do not match axis \(weight.axis) of shape \(Shape.text(shape))")
        }
        // Elements between consecutive steps of `axis`, and the axis length: channel of element i.
        let inner = channels == 1 ? 1 : shape[(axis + 1)...].reduce(1, *)
        var floats = [Float](repeating: 0, count: values.elementCount)
        for index in floats.indices {
            let channel = channels == 1 ? 0 : (index / inner) % channels
            let offset = zeroPoint.map { $0.value(at: channel) } ?? 0
            floats[index] = Float((values.value(at: index) - offset) * scale.value(at: channel))
        }
        return Tensor(shape: shape, floats: floats)
    }

    /// The exporter's scales per row of the canonical matrix the weight becomes through `layout`, when
    /// its codes are int8 with zero point 0 and its scale is per tensor or per output feature: then
    /// `samconvert --dtype int8` can store the exporter's codes as they are. nil otherwise (uint8 or
    /// nonzero zero points, scales along the inputs, a layout that is not a matrix's).
    func int8RowScales(_ weight: ONNXQuantizedWeight, layout: ONNXTarget.Layout) throws(ImportError) -> [Float]? {
        guard weight.stored.elementType.code == 3, weight.stored.shape.count == 2 else { return nil }  // INT8 matrices
        if let zeroPoint = weight.zeroPoint, try readRaw(zeroPoint).floats().contains(where: { $0 != 0 }) { return nil }
        let scales = try readRaw(weight.scale).floats()
        // The stored axis that runs along the canonical rows (output features).
        let rowAxis: Int
        switch layout {
        case .asStored: rowAxis = 0
        case .linearWeightFromMatMul: rowAxis = 1
        default: return nil
        }
        let rows = weight.stored.shape[rowAxis]
        let axis = weight.axis < 0 ? weight.axis + 2 : weight.axis
        if scales.count == 1 { return [Float](repeating: scales[0], count: rows) }
        guard scales.count == rows, axis == rowAxis else { return nil }
        return scales
    }

    private func readRaw(_ name: String) throws(ImportError) -> Tensor {
        do { return try model.tensor(named: name, copyingExternalData: true) } catch { throw ImportError(error) }
    }
}
