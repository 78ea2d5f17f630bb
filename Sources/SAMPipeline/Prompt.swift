import SAMTensor

/// What the user asks about, in original-image pixels (as `SamPredictor.predict` takes it).
public struct Prompt: Sendable, Equatable {
    /// A point in the photo's own pixels (x to the right, y down), with what it says about the object.
    public struct Point: Sendable, Equatable {
        /// Pixels from the photo's left edge.
        public var x: Float
        /// Pixels from the photo's top edge.
        public var y: Float
        /// 1 foreground, 0 background.
        public var label: Int
        /// A point with SamPredictor's integer label (1 foreground, 0 background).
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

    /// A box in the photo's own pixels: top-left corner (x0, y0), bottom-right corner (x1, y1).
    public struct Box: Sendable, Equatable {
        /// The left edge, pixels from the photo's left (SamPredictor's XYXY box: x0).
        public var x0: Float
        /// The top edge, pixels from the photo's top (y0).
        public var y0: Float
        /// The right edge, pixels from the photo's left (x1).
        public var x1: Float
        /// The bottom edge, pixels from the photo's top (y1).
        public var y1: Float
        /// A box from its top-left and bottom-right corners.
        public init(x0: Float, y0: Float, x1: Float, y1: Float) {
            self.x0 = x0
            self.y0 = y0
            self.x1 = x1
            self.y1 = y1
        }
    }

    /// The points, in any number (the model pads them as its predictor does).
    public var points: [Point]
    /// At most one box, as SamPredictor.predict.
    public var box: Box?
    /// Low-res mask logits [1, 1, 4g, 4g] of an earlier prediction (e.g. its best mask).
    public var maskInput: FloatTensor?

    /// A prompt of points, a box and a mask, any of them left out.
    public init(points: [Point] = [], box: Box? = nil, maskInput: FloatTensor? = nil) {
        self.points = points
        self.box = box
        self.maskInput = maskInput
    }
}

/// What a point says about the object: SamPredictor's labels 1 and 0.
public enum PointLabel: Int, Sendable, CaseIterable {
    /// Not part of the object (label 0).
    case background = 0
    /// Part of the object (label 1).
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
