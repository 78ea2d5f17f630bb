import SAMTensor

extension Kernels {
    /// Base pointers of a product's operands and of its fresh output.
    struct ProductPointers {
        let x: UnsafePointer<Float>
        let weight: UnsafePointer<Float>
        /// nil without a bias.
        let bias: UnsafePointer<Float>?
        /// The epilogue's residual (same layout as the output), nil without one.
        let residual: UnsafePointer<Float>?
        let out: UnsafeMutablePointer<Float>
    }

    /// A new buffer of `count` floats that `fill` must initialise completely (the tiled kernels
    /// write each tile once: bias, product, epilogue), given pointers to the operands.
    static func productOutput(count: Int, x: FloatTensor, weight: some WeightOperand, bias: FloatTensor?, epilogue: Epilogue,
                              _ fill: (ProductPointers) -> Void) -> [Float] {
        [Float](unsafeUninitializedCapacity: count) { outBuffer, initializedCount in
            x.data.withUnsafeBufferPointer { xBuffer in
                weight.withFloats { weightBuffer in
                    // An empty array may still have a base address, so decide by `bias` itself.
                    (bias?.data ?? []).withUnsafeBufferPointer { biasBuffer in
                        withResidual(epilogue) { residual in
                            fill(ProductPointers(x: xBuffer.baseAddress!, weight: weightBuffer.baseAddress!,
                                                 bias: bias == nil ? nil : biasBuffer.baseAddress, residual: residual,
                                                 out: outBuffer.baseAddress!))
                        }
                    }
                }
            }
            initializedCount = count
        }
    }
}
