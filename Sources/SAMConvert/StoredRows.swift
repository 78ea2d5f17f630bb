import SAMFiles
import SAMImport
import SAMModelFile
import SAMParallel
import SAMTensor

/// The rows of the .samw as `precision` stores them, made from the imported weights one tensor at a
/// time: each is read, narrowed or quantized and checksummed here (on every core), then dropped, and
/// made again when the writer writes it. What the making finds (overflow in f16, a matrix that cannot
/// be quantized) is known before anything is written.
struct StoredRows {
    var rows: [SAMWRow] = []
    var densePE: SAMWRow?
    /// Weights that narrowing to f16 made infinite, by name.
    var overflowed: [NonFiniteWeight] = []
    var plain: [String: StoredTensor] = [:]
    var quantized: [String: StoredQuantizedWeight] = [:]

    /// One row made: held bytes, and what was learnt making them.
    private struct Made {
        let row: SAMWRow
        let facts: Facts
    }

    /// What making a row tells besides its bytes: the dtype or scheme stored, and how many finite
    /// values narrowing made infinite (the largest of them).
    private struct Facts {
        let storedDType: DType?
        let scheme: QuantizedWeight.Scheme?
        let overflow: (count: Int, largest: Float)
    }

    /// `keptHalf`: matrices stored float16 instead of quantized (`WeightQuantization.keptHalf`).
    init(_ imported: ImportedWeights, precision: StoragePrecision, matrices: Set<String>,
         keptHalf: Set<String> = []) throws(ConversionFailure) {
        let names = imported.tensors.keys.sorted()
        let makers = names.map { name in
            Self.maker(name, imported.tensors[name]!, precision: precision,
                       plan: WeightQuantization.plan(name, isMatrix: matrices.contains(name), keptHalf: keptHalf.contains(name),
                                                     precision: precision))
        }
        // Made once here for the checksums, on every core, and dropped; an error is the first in name order.
        let summaries = [Result<(SAMWRow, Facts), ConversionFailure>?](unsafeUninitializedCapacity: names.count) { buffer, initialized in
            let out = buffer.baseAddress!
            (0..<names.count).forEach { (out + $0).initialize(to: nil) }
            Workers.forEach(names.count) { index in
                let source = imported.tensors[names[index]]!
                if let kept = Self.keptAsImported(names[index], source, precision: precision, quantized: matrices.contains(names[index]),
                                                  maker: makers[index]) {
                    out[index] = .success(kept)
                    return
                }
                do throws(ConversionFailure) {
                    let made = try makers[index]()
                    out[index] = .success((try Self.lazyRow(made, names[index], imported.tensors[names[index]]!, makers[index]), made.facts))
                } catch {
                    out[index] = .failure(error)
                }
            }
            initialized = names.count
        }
        for (index, name) in names.enumerated() {
            let (row, made): (SAMWRow, Facts)
            do throws(ConversionFailure) { (row, made) = try summaries[index]!.get() } catch { throw error }
            rows.append(row)
            if let scheme = made.scheme {
                quantized[name] = StoredQuantizedWeight(scheme: scheme, shape: row.shape, byteCount: row.byteCount)
            } else {
                let maker = makers[index]
                plain[name] = StoredTensor(dtype: made.storedDType!, shape: row.shape, byteCount: row.byteCount) { () throws(ConversionFailure) in
                    let again = try maker()
                    do { return try Tensor(dtype: again.facts.storedDType!, shape: again.row.shape, storage: again.row.bytes()) } catch {
                        throw ConversionFailure("\(name): \(error)")
                    }
                }
            }
            if made.overflow.count > 0 {
                let source = imported.tensors[name]!
                overflowed.append(NonFiniteWeight(tensor: name, file: source.origin.file, nan: 0, infinite: made.overflow.count,
                                                  elements: source.elementCount, beyondHalf: made.overflow.largest))
            }
        }
        if let dense = imported.denseImagePE {
            let (tensor, count, largest) = precision.narrow(dense.tensor)
            if count > 0 {
                overflowed.append(NonFiniteWeight(tensor: "denseImagePE", file: dense.origin.file, nan: 0, infinite: count,
                                                  elements: tensor.elementCount, beyondHalf: largest))
            }
            densePE = SAMWRow(name: ModelFile.densePositionalEncodingName, tensor: tensor)
        }
    }

    /// The row of a tensor stored as it was imported (f32, or already f16, and not quantized), from
    /// what the import learnt: it need not be made to be checksummed.
    private static func keptAsImported(_ name: String, _ source: ImportedTensor, precision: StoragePrecision, quantized: Bool,
                                       maker: @escaping @Sendable () throws(ConversionFailure) -> Made) -> (SAMWRow, Facts)? {
        guard !(quantized && precision.quantization != nil), precision != .half || source.dtype != .float32 else { return nil }
        let file = source.origin.file
        let row = SAMWRow(name: name, dtype: SAMWLayout.dtypeName(source.dtype), shape: source.shape, byteCount: source.byteCount,
                          isQuantized: false, crc32: source.crc32) { () throws(FormatError) -> TensorStorage in
            do { return try maker().row.bytes() } catch {
                throw FormatError(.unreadable, file: file, tensor: name, "cannot read it again to write it: \(error)")
            }
        }
        return (row, Facts(storedDType: source.dtype, scheme: nil, overflow: (0, 0)))
    }

    /// Reads `source` and stores it as `plan` says: at `precision`, quantized, or in float16.
    private static func maker(_ name: String, _ source: ImportedTensor, precision: StoragePrecision,
                              plan: WeightQuantization.Plan) -> @Sendable () throws(ConversionFailure) -> Made {
        { () throws(ConversionFailure) -> Made in
            let tensor: Tensor
            do throws(ImportError) { tensor = try source.read() } catch { throw ConversionFailure("\(error)") }
            switch plan {
            case .quantized(let scheme):
                let weight = try WeightQuantization.quantize(name, tensor, scheme: scheme, exporterScales: source.exporterInt8Scales)
                return Made(row: SAMWRow(name: name, quantized: weight), facts: Facts(storedDType: nil, scheme: weight.scheme, overflow: (0, 0)))
            case .halfUnlessOverflowing:
                let (half, count, _) = StoragePrecision.half.narrow(tensor)
                let kept = count == 0 ? half : tensor
                return Made(row: SAMWRow(name: name, tensor: kept), facts: Facts(storedDType: kept.dtype, scheme: nil, overflow: (0, 0)))
            case .asPrecision:
                break
            }
            let (narrowed, count, largest) = precision.narrow(tensor)
            return Made(row: SAMWRow(name: name, tensor: narrowed),
                        facts: Facts(storedDType: narrowed.dtype, scheme: nil, overflow: (count, largest)))
        }
    }

    /// The row the writer makes again when it writes it, checksummed from `made`.
    private static func lazyRow(_ made: Made, _ name: String, _ source: ImportedTensor,
                                _ maker: @escaping @Sendable () throws(ConversionFailure) -> Made) throws(ConversionFailure) -> SAMWRow {
        let bytes: TensorStorage
        do throws(FormatError) { bytes = try made.row.bytes() } catch { throw ConversionFailure("\(error)") }
        let file = source.origin.file
        return SAMWRow(name: name, dtype: made.row.dtype, shape: made.row.shape, byteCount: made.row.byteCount,
                       isQuantized: made.row.isQuantized, crc32: CRC32.checksum(bytes.bytes)) { () throws(FormatError) -> TensorStorage in
            do { return try maker().row.bytes() } catch {
                throw FormatError(.unreadable, file: file, tensor: name, "cannot read it again to write it: \(error)")
            }
        }
    }
}
