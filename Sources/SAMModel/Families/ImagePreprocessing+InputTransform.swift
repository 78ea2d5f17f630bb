import SAMImage

extension ImagePreprocessing {
    /// The predictor transform this preprocessing describes for a `side` x `side` input.
    package func inputTransform(side: Int) -> InputTransform {
        switch resize {
        case .longestSide: InputTransform(samPreprocessor(side: side))
        case .square:
            InputTransform(SquarePreprocessor(side: side, pixelMean: pixelMean.map(Float.init), pixelStd: pixelStd.map(Float.init)))
        }
    }

    /// SAM's normalise-and-pad step with these statistics.
    package func samPreprocessor(side: Int) -> SamPreprocessor {
        SamPreprocessor(pixelMean: pixelMean.map(Float.init), pixelStd: pixelStd.map(Float.init), imageSize: side)
    }
}
