import SAMFiles
import SAMImage

/// The prompts file of a tracking run, `prompts.json`: a JSON list of entries
///
///     {"frame": 0, "object": 1, "points": [[210, 350, 1], [250, 220, 0]], "box": [100, 80, 400, 500], "round": 0}
///     {"frame": 40, "object": 2, "mask": "car_40.png"}
///
/// - `frame` (required): the frame's position in the video, from 0 (upstream's `frame_idx`).
/// - `object` (required): the object's ID, 0...2147483647 (upstream's `obj_id`).
/// - `points`: `[x, y, label]` triples in the frame's pixels; label 1 foreground, 0 background.
/// - `box`: `[x0, y0, x1, y1]`, top-left and bottom-right corners in the frame's pixels.
/// - `mask`: a mask image's file name, which the caller resolves and reads; never together with
///   points or a box (upstream's `add_new_mask` is a call of its own).
/// - `round`: the round of interaction, 0 (the default) or more.
///
/// At least one of points, box and mask. Any other key is refused, so a misspelt `"pionts"` is
/// not silently a prompt without points. Integers may be written as `3` or `3.0`, not `3.5`.
///
/// `parse` checks the file on its own (size first, then JSON with bounded nesting and finite
/// numbers, then every entry); `validate` checks the prompts against the video: frames that
/// exist, coordinates near the frame, the number of objects. Upstream takes any float coordinates;
/// here they must lie within one frame's width (height) of it, x in -W...2W and y in -H...2H, so a
/// typo or coordinates meant for another resolution are caught while a box drawn a little past the
/// edge is kept.
public enum TrackPromptFile {
    /// The keys an entry may have.
    package static let keys: Set<String> = ["frame", "object", "points", "box", "mask", "round"]
    /// Largest object ID and round (they fit an Int32 wherever they are stored).
    package static let maximumID = Int(Int32.max)
    /// Largest frame position read: every integer up to 2^53 is exact in JSON's doubles.
    static let maximumFrame = 1 << 53

    /// The prompts in `bytes` (the whole file), in the file's order. `source` names the file in errors.
    public static func parse(_ bytes: [UInt8], source: String, limits: TrackLimits = .default) throws(TrackPromptError) -> [TrackPrompt] {
        guard bytes.count <= limits.maxFileBytes else {
            throw TrackPromptError(.tooLarge, source: source, "\(bytes.count) bytes; a prompts file is at most \(limits.maxFileBytes) (TrackLimits.maxFileBytes)")
        }
        let parsed = bytes.withUnsafeBytes { buffer in Result { () throws(JSONParser.Failure) in try JSONParser.parse(buffer) } }
        let document: JSONValue
        switch parsed {
        case .success(let value): document = value
        case .failure(let error): throw TrackPromptError(.malformed, source: source, "not valid JSON: " + describe(error, in: bytes))
        }
        guard case .array(let entries) = document else {
            throw TrackPromptError(.schema, source: source, "must be a JSON list of prompt entries ({\"frame\": ..., \"object\": ..., ...}), not \(kind(document))")
        }
        guard entries.count <= limits.maxEntries else {
            throw TrackPromptError(.overLimit, source: source, "\(entries.count) entries; at most \(limits.maxEntries) (TrackLimits.maxEntries)")
        }
        var prompts: [TrackPrompt] = []
        prompts.reserveCapacity(entries.count)
        for (index, entry) in entries.enumerated() {
            let prompt = try parseEntry(entry, index: index, source: source, limits: limits)
            try check(prompt, index: index, source: source, limits: limits)
            prompts.append(prompt)
        }
        return prompts
    }

    /// Checks `prompts` (parsed, or made in code) against a video of `frameCount` frames of
    /// `frameSize`: every check of `parse` on the values, frames within the video, coordinates
    /// within one frame's size of it, at most `limits.maxObjects` distinct objects and
    /// `limits.maxEntries` prompts.
    public static func validate(_ prompts: [TrackPrompt], frameCount: Int, frameSize: ImageSize, limits: TrackLimits = .default,
                                source: String) throws(TrackPromptError) {
        guard prompts.count <= limits.maxEntries else {
            throw TrackPromptError(.overLimit, source: source, "\(prompts.count) entries; at most \(limits.maxEntries) (TrackLimits.maxEntries)")
        }
        var objects: Set<Int> = []
        for (index, prompt) in prompts.enumerated() {
            try check(prompt, index: index, source: source, limits: limits)
            guard prompt.frame < frameCount else {
                let last = frameCount > 0 ? "its last frame is \(frameCount - 1)" : "it has none"
                throw TrackPromptError(.frameOutOfRange, source: source, entry: index,
                                       "frame \(prompt.frame) is past the video's end: \(frameCount) frame(s), \(last) (frames count from 0)")
            }
            for (number, point) in prompt.points.enumerated() {
                try checkInside(x: point.x, y: point.y, what: "point \(number) (\(point.x), \(point.y))", frameSize: frameSize, index: index, source: source)
            }
            if let box = prompt.box {
                try checkInside(x: box.x0, y: box.y0, what: "box corner (\(box.x0), \(box.y0))", frameSize: frameSize, index: index, source: source)
                try checkInside(x: box.x1, y: box.y1, what: "box corner (\(box.x1), \(box.y1))", frameSize: frameSize, index: index, source: source)
            }
            if objects.insert(prompt.object).inserted, objects.count > limits.maxObjects {
                throw TrackPromptError(.overLimit, source: source, entry: index,
                                       "object \(prompt.object) is object number \(objects.count); at most \(limits.maxObjects) objects are tracked (TrackLimits.maxObjects)")
            }
        }
    }

    // MARK: - Entries

    static func parseEntry(_ entry: JSONValue, index: Int, source: String, limits: TrackLimits) throws(TrackPromptError) -> TrackPrompt {
        func failure(_ code: TrackPromptError.Code, _ message: String) -> TrackPromptError {
            TrackPromptError(code, source: source, entry: index, message)
        }
        guard case .object(let members) = entry else {
            throw failure(.schema, "must be an object ({\"frame\": ..., \"object\": ..., ...}), not \(kind(entry))")
        }
        if let unknown = members.keys.filter({ !keys.contains($0) }).sorted().first {
            throw failure(.schema, "unknown key \"\(unknown)\"; an entry has \(keys.sorted().joined(separator: ", "))")
        }
        func integer(_ key: String, maximum: Int) throws(TrackPromptError) -> Int? {
            guard let value = members[key] else { return nil }
            guard case .number(let number) = value else { throw failure(.schema, "\"\(key)\" must be an integer, not \(kind(value))") }
            guard number >= 0 else { throw failure(.invalidValue, "\"\(key)\" is \(text(number)); it must not be negative") }
            guard number.rounded(.towardZero) == number else { throw failure(.invalidValue, "\"\(key)\" is \(text(number)); it must be an integer") }
            guard number <= Double(maximum) else { throw failure(.invalidValue, "\"\(key)\" is \(text(number)); at most \(maximum)") }
            return Int(number)
        }
        /// A JSON number as a float coordinate (JSON's are finite doubles; a float can overflow).
        func coordinate(_ value: Double, _ what: String) throws(TrackPromptError) -> Float {
            let single = Float(value)
            guard single.isFinite else { throw failure(.invalidValue, "\(what) has coordinate \(text(value)), beyond a float's range") }
            return single
        }
        guard let frame = try integer("frame", maximum: maximumFrame) else { throw failure(.schema, "missing \"frame\" (the frame's position, from 0)") }
        guard let object = try integer("object", maximum: maximumID) else { throw failure(.schema, "missing \"object\" (the object's ID)") }
        let round = try integer("round", maximum: maximumID) ?? 0

        var points: [Prompt.Point] = []
        if let value = members["points"] {
            guard case .array(let list) = value else { throw failure(.schema, "\"points\" must be a list of [x, y, label], not \(kind(value))") }
            guard list.count <= limits.maxPointsPerEntry else {
                throw failure(.overLimit, "\(list.count) points; at most \(limits.maxPointsPerEntry) in one entry (TrackLimits.maxPointsPerEntry)")
            }
            for (number, item) in list.enumerated() {
                guard case .array(let triple) = item, triple.count == 3,
                      case .number(let x) = triple[0], case .number(let y) = triple[1], case .number(let label) = triple[2] else {
                    throw failure(.schema, "point \(number) must be [x, y, label] (three numbers)")
                }
                guard label == 0 || label == 1 else {
                    throw failure(.invalidValue, "point \(number) has label \(text(label)); it must be 1 (foreground) or 0 (background)")
                }
                points.append(Prompt.Point(x: try coordinate(x, "point \(number)"), y: try coordinate(y, "point \(number)"), label: Int(label)))
            }
        }
        var box: Prompt.Box?
        if let value = members["box"] {
            guard case .array(let corners) = value, corners.count == 4 else { throw failure(.schema, "\"box\" must be [x0, y0, x1, y1]") }
            var numbers: [Float] = []
            for corner in corners {
                guard case .number(let number) = corner else { throw failure(.schema, "\"box\" must be [x0, y0, x1, y1] (four numbers)") }
                numbers.append(try coordinate(number, "box"))
            }
            box = Prompt.Box(x0: numbers[0], y0: numbers[1], x1: numbers[2], y1: numbers[3])
        }
        var maskFile: String?
        if let value = members["mask"] {
            guard case .string(let name) = value else { throw failure(.schema, "\"mask\" must be a file name, not \(kind(value))") }
            maskFile = name
        }
        return TrackPrompt(frame: frame, object: object, points: points, box: box, maskFile: maskFile, round: round)
    }

    /// The checks that need no video: what an entry holds and the ranges of its values.
    static func check(_ prompt: TrackPrompt, index: Int, source: String, limits: TrackLimits) throws(TrackPromptError) {
        func failure(_ code: TrackPromptError.Code, _ message: String) -> TrackPromptError {
            TrackPromptError(code, source: source, entry: index, message)
        }
        guard prompt.frame >= 0 else { throw failure(.invalidValue, "frame \(prompt.frame) is negative") }
        guard (0...maximumID).contains(prompt.object) else { throw failure(.invalidValue, "object \(prompt.object) is outside 0...\(maximumID)") }
        guard (0...maximumID).contains(prompt.round) else { throw failure(.invalidValue, "round \(prompt.round) is outside 0...\(maximumID)") }
        guard !prompt.points.isEmpty || prompt.box != nil || prompt.maskFile != nil else {
            throw failure(.emptyEntry, "no points, box or mask; an entry needs at least one")
        }
        if prompt.maskFile != nil && (!prompt.points.isEmpty || prompt.box != nil) {
            throw failure(.conflictingPrompts, "a mask cannot be given with points or a box in one entry (upstream adds a mask on its own); use two entries")
        }
        if let name = prompt.maskFile, name.isEmpty || name.utf8.contains(0) {
            throw failure(.invalidValue, name.isEmpty ? "\"mask\" is an empty file name" : "\"mask\" holds a NUL character")
        }
        guard prompt.points.count <= limits.maxPointsPerEntry else {
            throw failure(.overLimit, "\(prompt.points.count) points; at most \(limits.maxPointsPerEntry) in one entry (TrackLimits.maxPointsPerEntry)")
        }
        for (number, point) in prompt.points.enumerated() {
            guard point.x.isFinite, point.y.isFinite else { throw failure(.invalidValue, "point \(number) has a coordinate that is not finite") }
            guard point.label == 0 || point.label == 1 else {
                throw failure(.invalidValue, "point \(number) has label \(point.label); it must be 1 (foreground) or 0 (background)")
            }
        }
        if let box = prompt.box {
            guard box.x0.isFinite, box.y0.isFinite, box.x1.isFinite, box.y1.isFinite else {
                throw failure(.invalidValue, "the box has a coordinate that is not finite")
            }
            guard box.x1 >= box.x0, box.y1 >= box.y0 else {
                throw failure(.invalidValue, "box [\(box.x0), \(box.y0), \(box.x1), \(box.y1)] has x1 < x0 or y1 < y0; it is [x0, y0, x1, y1], top-left corner first")
            }
        }
    }

    static func checkInside(x: Float, y: Float, what: String, frameSize: ImageSize, index: Int, source: String) throws(TrackPromptError) {
        let width = Float(frameSize.width), height = Float(frameSize.height)
        guard x >= -width, x <= 2 * width, y >= -height, y <= 2 * height else {
            throw TrackPromptError(.outsideFrame, source: source, entry: index,
                                   "\(what) is too far outside the \(frameSize.width)x\(frameSize.height) (WxH) frame: "
                                   + "x must be in \(-frameSize.width)...\(2 * frameSize.width), y in \(-frameSize.height)...\(2 * frameSize.height)")
        }
    }

    // MARK: - Messages

    /// The parser's failure, with the line and column it happened at, and what NaN or Infinity
    /// (which Python's json module writes) would be.
    static func describe(_ failure: JSONParser.Failure, in bytes: [UInt8]) -> String {
        let offset = min(failure.offset, bytes.count)
        var line = 1, column = 1
        for byte in bytes[..<offset] {
            if byte == UInt8(ascii: "\n") { line += 1; column = 1 } else { column += 1 }
        }
        let rest = bytes[offset...]
        let behind = offset > 0 ? bytes[(offset - 1)...] : rest
        let nonFinite = ["NaN", "Infinity"].contains { rest.starts(with: $0.utf8) || behind.starts(with: ("-" + $0).utf8) }
        return "\(failure.reason) at line \(line), column \(column)"
            + (nonFinite ? " (NaN and Infinity are not JSON numbers; coordinates must be finite)" : "")
    }

    static func kind(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "a list"
        case .object: "an object"
        }
    }

    /// A number as written: integers without ".0".
    static func text(_ value: Double) -> String {
        value.rounded(.towardZero) == value && abs(value) < 1e15 ? String(Int(value)) : "\(value)"
    }
}
