import Foundation
import SAMImage
import SAMPipeline
import Testing

/// The tracking tool's prompts file: a valid file read whole, and each way a file or a prompt
/// list is refused, with the file, entry and problem named.
@Suite("TrackPromptFile")
struct TrackPromptFileTests {
    static let frameSize = ImageSize(height: 480, width: 640)

    static func parse(_ json: String, limits: TrackLimits = .default) throws(TrackPromptError) -> [TrackPrompt] {
        try TrackPromptFile.parse(Array(json.utf8), source: "prompts.json", limits: limits)
    }

    /// The error parsing `json` gives (nil if it parses).
    static func failure(_ json: String, limits: TrackLimits = .default) -> TrackPromptError? {
        do { _ = try parse(json, limits: limits) } catch { return error }
        return nil
    }

    /// The error validating `prompts` against a 10-frame 640x480 video gives (nil if valid).
    static func validationFailure(_ prompts: [TrackPrompt], limits: TrackLimits = .default) -> TrackPromptError? {
        do { try TrackPromptFile.validate(prompts, frameCount: 10, frameSize: frameSize, limits: limits, source: "prompts.json") } catch { return error }
        return nil
    }

    @Test("a valid file: points, box, mask, rounds, integers written as 3.0, in the file's order")
    func valid() throws {
        let json = """
        [
          {"frame": 0, "object": 1, "points": [[210.5, 350, 1], [250, 220, 0]]},
          {"object": 1, "frame": 0, "box": [100, 80, 400.25, 479], "points": [[300, 300, 1]]},
          {"frame": 9.0, "object": 2, "mask": "car_9.png", "round": 1},
          {"frame": 3, "object": 0, "box": [-20, -5, 700, 490], "round": 0}
        ]
        """
        let prompts = try Self.parse(json)
        #expect(prompts == [
            TrackPrompt(frame: 0, object: 1, points: [Prompt.Point(x: 210.5, y: 350, label: 1), Prompt.Point(x: 250, y: 220, label: 0)]),
            TrackPrompt(frame: 0, object: 1, points: [Prompt.Point(x: 300, y: 300, label: 1)], box: Prompt.Box(x0: 100, y0: 80, x1: 400.25, y1: 479)),
            TrackPrompt(frame: 9, object: 2, maskFile: "car_9.png", round: 1),
            TrackPrompt(frame: 3, object: 0, box: Prompt.Box(x0: -20, y0: -5, x1: 700, y1: 490)),
        ])
        #expect(Self.validationFailure(prompts) == nil)
        #expect(try Self.parse(" [ ] \n").isEmpty)
    }

    @Test("malformed JSON is refused with its line and column; NaN and Infinity are named",
          arguments: ["not json", "[{\"frame\": 0, \"object\": 1, \"box\": [0, 0, 1, 1]},]", "[{\"frame\": 0, \"frame\": 1}]", "",
                      "[{\"frame\": 0, \"object\": 1,\n \"points\": [[NaN, 2, 1]]}]", "[{\"frame\": 0, \"object\": 1, \"box\": [-Infinity, 0, 1, 1]}]",
                      "[1e400]", "[\"\u{1}\"]"])
    func malformed(json: String) {
        let error = Self.failure(json)
        #expect(error?.code == .malformed, "\(json): \(String(describing: error))")
        #expect(error?.entry == nil)
        #expect(error?.message.contains("line") == true)
        if json.contains("NaN") || json.contains("Infinity") {
            #expect(error?.message.contains("NaN and Infinity are not JSON numbers") == true)
            #expect(json.contains("NaN") ? error?.message.contains("line 2") == true : true)
        }
    }

    @Test("hostile input ends quickly as an error: deep nesting, a megabyte-long number, a huge list")
    func hostile() {
        let start = ContinuousClock.now
        #expect(Self.failure(String(repeating: "[", count: 100_000))?.code == .malformed)
        #expect(Self.failure(String(repeating: "{\"a\":", count: 100_000))?.code == .malformed)
        #expect(Self.failure("[" + String(repeating: "9", count: 1_000_000) + "]")?.code == .malformed)
        #expect(Self.failure("[{\"frame\": 1" + String(repeating: "0", count: 30) + ", \"object\": 1, \"box\": [0, 0, 1, 1]}]")?.code == .invalidValue)
        let many = "[" + Array(repeating: "{\"frame\": 0, \"object\": 1, \"box\": [0, 0, 1, 1]}", count: 10_001).joined(separator: ",") + "]"
        #expect(Self.failure(many)?.code == .overLimit)
        #expect(Self.failure(many, limits: TrackLimits(maxFileBytes: 1000))?.code == .tooLarge)
        #expect(ContinuousClock.now - start < .seconds(20))
    }

    @Test("wrong shapes, unknown and missing keys are schema errors naming the entry",
          arguments: [
            ("{\"frame\": 0, \"object\": 1}", nil, "list"),
            ("[1]", 0, "object"),
            ("[{\"frame\": 0, \"object\": 1, \"pionts\": [[1, 2, 1]]}]", 0, "pionts"),
            ("[{\"object\": 1, \"box\": [0, 0, 1, 1]}]", 0, "frame"),
            ("[{\"frame\": 0, \"box\": [0, 0, 1, 1]}]", 0, "object"),
            ("[{\"frame\": \"3\", \"object\": 1, \"box\": [0, 0, 1, 1]}]", 0, "string"),
            ("[{\"frame\": 0, \"object\": null, \"box\": [0, 0, 1, 1]}]", 0, "null"),
            ("[{\"frame\": 0, \"object\": 1, \"points\": [1, 2, 1]}]", 0, "point 0"),
            ("[{\"frame\": 0, \"object\": 1, \"points\": [[1, 2]]}]", 0, "point 0"),
            ("[{\"frame\": 0, \"object\": 1, \"points\": [[1, 2, true]]}]", 0, "point 0"),
            ("[{\"frame\": 0, \"object\": 1, \"points\": {\"x\": 1}}]", 0, "points"),
            ("[{\"frame\": 0, \"object\": 1, \"box\": [0, 0, 1]}]", 0, "box"),
            ("[{\"frame\": 0, \"object\": 1, \"box\": [0, 0, 1, \"1\"]}]", 0, "box"),
            ("[{\"frame\": 0, \"object\": 1, \"mask\": 3}]", 0, "mask"),
            ("[{\"frame\": 0, \"object\": 1, \"box\": [0, 0, 1, 1]}, {\"frame\": 0, \"object\": 1, \"Box\": [0, 0, 1, 1]}]", 1, "Box"),
          ] as [(String, Int?, String)])
    func schema(json: String, entry: Int?, named: String) {
        let error = Self.failure(json)
        #expect(error?.code == .schema, "\(json): \(String(describing: error))")
        #expect(error?.entry == entry)
        #expect(error?.message.contains(named) == true, "\(String(describing: error))")
    }

    @Test("values out of range are refused naming the entry and the value",
          arguments: [
            ("\"frame\": -1, \"object\": 1, \"box\": [0, 0, 1, 1]", "-1"),
            ("\"frame\": 1.5, \"object\": 1, \"box\": [0, 0, 1, 1]", "1.5"),
            ("\"frame\": 0, \"object\": -2, \"box\": [0, 0, 1, 1]", "-2"),
            ("\"frame\": 0, \"object\": 1e10, \"box\": [0, 0, 1, 1]", "2147483647"),
            ("\"frame\": 0, \"object\": 1, \"round\": -1, \"box\": [0, 0, 1, 1]", "round"),
            ("\"frame\": 0, \"object\": 1, \"round\": 0.5, \"box\": [0, 0, 1, 1]", "round"),
            ("\"frame\": 0, \"object\": 1, \"points\": [[1, 2, 2]]", "label 2"),
            ("\"frame\": 0, \"object\": 1, \"points\": [[1, 2, 1], [1, 2, -1]]", "point 1"),
            ("\"frame\": 0, \"object\": 1, \"points\": [[1, 2, 0.5]]", "label 0.5"),
            ("\"frame\": 0, \"object\": 1, \"box\": [5, 0, 1, 1]", "x1 < x0"),
            ("\"frame\": 0, \"object\": 1, \"box\": [0, 5, 1, 1]", "y1 < y0"),
            ("\"frame\": 0, \"object\": 1, \"points\": [[1e39, 2, 1]]", "float"),
            ("\"frame\": 0, \"object\": 1, \"mask\": \"\"", "empty"),
          ])
    func invalidValue(members: String, named: String) {
        let json = "[{\"frame\": 0, \"object\": 0, \"box\": [0, 0, 1, 1]}, {\(members)}]"
        let error = Self.failure(json)
        #expect(error?.code == .invalidValue, "\(members): \(String(describing: error))")
        #expect(error?.entry == 1)
        #expect(error?.message.contains(named) == true, "\(String(describing: error))")
        #expect(error?.description.hasPrefix("prompts.json: entry 1: ") == true)
    }

    @Test("an entry needs a prompt, and a mask comes alone")
    func emptyAndConflicting() {
        #expect(Self.failure("[{\"frame\": 0, \"object\": 1}]")?.code == .emptyEntry)
        #expect(Self.failure("[{\"frame\": 0, \"object\": 1, \"points\": []}]")?.code == .emptyEntry)
        #expect(Self.failure("[{\"frame\": 0, \"object\": 1, \"mask\": \"m.png\", \"points\": [[1, 2, 1]]}]")?.code == .conflictingPrompts)
        #expect(Self.failure("[{\"frame\": 0, \"object\": 1, \"mask\": \"m.png\", \"box\": [0, 0, 1, 1]}]")?.code == .conflictingPrompts)
    }

    @Test("limits: points in an entry and entries in a file, each naming its limit")
    func limits() {
        let points = Self.failure("[{\"frame\": 0, \"object\": 1, \"points\": [[1, 2, 1], [1, 2, 1], [1, 2, 1]]}]",
                                  limits: TrackLimits(maxPointsPerEntry: 2))
        #expect(points?.code == .overLimit && points?.entry == 0 && points?.message.contains("TrackLimits.maxPointsPerEntry") == true)
        let entries = Self.failure("[{\"frame\": 0, \"object\": 1, \"box\": [0, 0, 1, 1]}, {\"frame\": 1, \"object\": 1, \"box\": [0, 0, 1, 1]}]",
                                   limits: TrackLimits(maxEntries: 1))
        #expect(entries?.code == .overLimit && entries?.message.contains("TrackLimits.maxEntries") == true)
        let bytes = Self.failure("[]     ", limits: TrackLimits(maxFileBytes: 4))
        #expect(bytes?.code == .tooLarge && bytes?.message.contains("7 bytes") == true)
    }

    @Test("validate: a frame past the end names the frame and the count")
    func framePastEnd() throws {
        let prompts = [TrackPrompt(frame: 9, object: 1, box: Prompt.Box(x0: 0, y0: 0, x1: 1, y1: 1)),
                       TrackPrompt(frame: 10, object: 1, box: Prompt.Box(x0: 0, y0: 0, x1: 1, y1: 1))]
        let error = Self.validationFailure(prompts)
        #expect(error?.code == .frameOutOfRange && error?.entry == 1)
        #expect(error?.message.contains("frame 10") == true && error?.message.contains("10 frame(s)") == true, "\(String(describing: error))")
    }

    @Test("validate: coordinates within one frame's size of the frame, edges included")
    func outsideFrame() {
        func point(_ x: Float, _ y: Float) -> [TrackPrompt] { [TrackPrompt(frame: 0, object: 1, points: [Prompt.Point(x: x, y: y)])] }
        for (x, y) in [(-640, -480), (1280, 960), (0, 0), (639.5, 479.5)] as [(Float, Float)] {
            #expect(Self.validationFailure(point(x, y)) == nil, "(\(x), \(y))")
        }
        for (x, y) in [(-640.5, 0), (1280.5, 0), (0, -481), (0, 961), (1920, 1080)] as [(Float, Float)] {
            let error = Self.validationFailure(point(x, y))
            #expect(error?.code == .outsideFrame && error?.entry == 0, "(\(x), \(y))")
            #expect(error?.message.contains("640x480") == true)
        }
        let box = [TrackPrompt(frame: 0, object: 1, box: Prompt.Box(x0: 0, y0: 0, x1: 2000, y1: 10))]
        #expect(Self.validationFailure(box)?.code == .outsideFrame)
    }

    @Test("validate: distinct objects over the limit name the limit; repeated objects count once")
    func tooManyObjects() {
        let box = Prompt.Box(x0: 0, y0: 0, x1: 1, y1: 1)
        let prompts = [1, 2, 1, 2, 7].enumerated().map { TrackPrompt(frame: $0.offset, object: $0.element, box: box) }
        #expect(Self.validationFailure(Array(prompts.prefix(4)), limits: TrackLimits(maxObjects: 2)) == nil)
        let error = Self.validationFailure(prompts, limits: TrackLimits(maxObjects: 2))
        #expect(error?.code == .overLimit && error?.entry == 4)
        #expect(error?.message.contains("at most 2 objects") == true && error?.message.contains("TrackLimits.maxObjects") == true)
        let many = (0...64).map { TrackPrompt(frame: 0, object: $0, box: box) }
        #expect(Self.validationFailure(many)?.code == .overLimit)  // the default: 64
        #expect(TrackLimits.default.maxObjects == 64)
    }

    @Test("validate holds prompts made in code to parse's rules")
    func validateInCode() {
        let box = Prompt.Box(x0: 0, y0: 0, x1: 1, y1: 1)
        #expect(Self.validationFailure([TrackPrompt(frame: -1, object: 1, box: box)])?.code == .invalidValue)
        #expect(Self.validationFailure([TrackPrompt(frame: 0, object: 1, points: [Prompt.Point(x: .nan, y: 1)])])?.code == .invalidValue)
        #expect(Self.validationFailure([TrackPrompt(frame: 0, object: 1, points: [Prompt.Point(x: 1, y: 1, label: 3)])])?.code == .invalidValue)
        #expect(Self.validationFailure([TrackPrompt(frame: 0, object: 1, box: Prompt.Box(x0: 2, y0: 0, x1: 1, y1: 1))])?.code == .invalidValue)
        #expect(Self.validationFailure([TrackPrompt(frame: 0, object: 1)])?.code == .emptyEntry)
        #expect(Self.validationFailure([TrackPrompt(frame: 0, object: 1, box: box, maskFile: "m.png")])?.code == .conflictingPrompts)
        #expect(Self.validationFailure([TrackPrompt(frame: 0, object: 1, maskFile: "a\u{0}b")])?.code == .invalidValue)
    }
}
