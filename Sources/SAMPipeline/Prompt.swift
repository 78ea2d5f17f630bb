import SAMTensor

/// What the user asks about, in original-image pixels (as `SamPredictor.predict` takes it).
public struct Prompt: Sendable, Equatable {
    public struct Point: Sendable, Equatable {
        public var x: Float
        public var y: Float
        /// 1 foreground, 0 background.
        public var label: Int
        public init(x: Float, y: Float, label: Int = 1) {
            self.x = x
            self.y = y
            self.label = label
        }

        /// A point that marks the object (`.foreground`) or what is not it (`.background`).
        public init(x: Float, y: Float, _ kind: PointLabel) {
            self.init(x: x, y: y, label: kind.rawValue)
        }
    }

    public struct Box: Sendable, Equatable {
        public var x0: Float, y0: Float, x1: Float, y1: Float
        public init(x0: Float, y0: Float, x1: Float, y1: Float) {
            self.x0 = x0
            self.y0 = y0
            self.x1 = x1
            self.y1 = y1
        }
    }

    public var points: [Point]
    /// At most one box, as SamPredictor.predict.
    public var box: Box?
    /// Low-res mask logits [1, 1, 4g, 4g] of an earlier prediction (e.g. its best mask).
    public var maskInput: FloatTensor?

    public init(points: [Point] = [], box: Box? = nil, maskInput: FloatTensor? = nil) {
        self.points = points
        self.box = box
        self.maskInput = maskInput
    }
}

/// What a point says about the object: SamPredictor's labels 1 and 0.
public enum PointLabel: Int, Sendable, CaseIterable {
    case background = 0
    case foreground = 1
}

/// Which masks a prediction returns.
public enum MaskSelection: String, Sendable, CaseIterable {
    /// SamPredictor's multimask_output=True: masks 1, 2, 3 (the ambiguity-aware ones).
    case multimask
    /// All four decoder outputs, mask 0 included.
    case all
    /// The model family's single mask. SAM: the official ONNX export's rule, the best score after
    /// adding (points - 2.5) * 1000 to mask 0's, so one point picks among 1...3 and several points (or
    /// a box) favour mask 0. SAM 2: SAM2ImagePredictor's multimask_output=False, mask 0 unless its
    /// stability score is below 0.98, then the multimask output with the best score.
    case single
}
