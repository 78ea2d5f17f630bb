/// One prompt of a tracking run: what the user says about one object on one frame, as upstream's
/// `SAM2VideoPredictor.add_new_points_or_box` (points and/or a box) or `add_new_mask` (a mask).
public struct TrackPrompt: Sendable, Equatable {
    /// The frame's position in the video, from 0 (upstream's `frame_idx`; for a folder of frames,
    /// its position in `FrameFolder`'s order, not the number in the file's name).
    public var frame: Int
    /// The object's ID (upstream's `obj_id`): prompts with the same ID are about the same object.
    public var object: Int
    /// Points in the frame's pixels, label 1 foreground, 0 background.
    public var points: [Prompt.Point]
    /// A box in the frame's pixels.
    public var box: Prompt.Box?
    /// A mask image's file name, as written in the prompts file (the caller resolves and reads it).
    public var maskFile: String?
    /// Which round of interaction the prompt belongs to (0 first): a run can add prompts after a
    /// first propagation, as upstream's notebooks refine a track.
    public var round: Int

    /// A prompt for `object` on `frame`: points and/or a box, or a mask file, in interaction round `round`.
    public init(frame: Int, object: Int, points: [Prompt.Point] = [], box: Prompt.Box? = nil, maskFile: String? = nil, round: Int = 0) {
        self.frame = frame
        self.object = object
        self.points = points
        self.box = box
        self.maskFile = maskFile
        self.round = round
    }
}
