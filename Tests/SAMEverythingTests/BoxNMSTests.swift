import Testing
@testable import SAMEverything

/// torchvision.ops.nms and batched_nms against torchvision's CPU kernel.
@Suite("Box NMS")
struct BoxNMSTests {
    struct Result: Decodable {
        let iou_threshold: Double
        let nms: [Int]
        let batched: [Int]
    }
    struct Case: Decodable {
        let offset: Int
        let count: Int
        let note: String
        let results: [Result]
    }
    struct File: Decodable { let cases: [Case] }

    struct Inputs {
        let boxes: [FloatBox]
        let scores: [Float]
        let categories: [Int]
    }

    static func load() throws -> (File, Inputs) {
        let file = try Fixtures.json("nms.json", as: File.self)
        let flat = try Fixtures.npy("nms_boxes.npy").float32()
        let boxes = stride(from: 0, to: flat.count, by: 4).map { FloatBox(x0: flat[$0], y0: flat[$0 + 1], x1: flat[$0 + 2], y1: flat[$0 + 3]) }
        return (file, Inputs(boxes: boxes, scores: try Fixtures.npy("nms_scores.npy").float32(),
                             categories: try Fixtures.npy("nms_categories.npy").int64()))
    }

    @Test("kept indices and their order equal torchvision's")
    func keep() throws {
        let (file, inputs) = try Self.load()
        #expect(file.cases.count >= 10)
        for c in file.cases {
            let range = c.offset..<(c.offset + c.count)
            let boxes = Array(inputs.boxes[range]), scores = Array(inputs.scores[range]), categories = Array(inputs.categories[range])
            for result in c.results {
                let context = "\(c.note), threshold \(result.iou_threshold)"
                expectEqualElements(try nms(boxes: boxes, scores: scores, iouThreshold: result.iou_threshold), result.nms, context + " nms")
                let batched = try batchedNMS(boxes: boxes, scores: scores, categories: categories, iouThreshold: result.iou_threshold)
                if c.note == "vanilla path, tied scores" {
                    // torchvision re-sorts with an unstable sort here: same set, same score sequence.
                    #expect(Set(batched) == Set(result.batched), "\(context) batched set")
                    expectEqualElements(batched.map { scores[$0] }, result.batched.map { scores[$0] }, context + " batched scores")
                    let tiesAscending = batched.indices.allSatisfy { $0 == 0 || scores[batched[$0 - 1]] > scores[batched[$0]] || batched[$0 - 1] < batched[$0] }
                    #expect(tiesAscending, "\(context): ties not in ascending index order")
                } else {
                    expectEqualElements(batched, result.batched, context + " batched")
                }
            }
        }
    }

    @Test("strict IoU > threshold: 0.5 exactly survives 0.5; 7/10 survives 0.7 (float32 0.7 < 0.7)")
    func strictness() throws {
        let boxes = [FloatBox(x0: 0, y0: 0, x1: 3, y1: 1), FloatBox(x0: 1, y0: 0, x1: 4, y1: 1)]
        #expect(try nms(boxes: boxes, scores: [0.9, 0.8], iouThreshold: 0.5) == [0, 1])
        #expect(try nms(boxes: boxes, scores: [0.9, 0.8], iouThreshold: 0.49) == [0])
        let seventh = [FloatBox(x0: 10, y0: 0, x1: 17, y1: 1), FloatBox(x0: 10, y0: 0, x1: 20, y1: 1)]
        #expect(try nms(boxes: seventh, scores: [0.9, 0.8], iouThreshold: 0.7) == [0, 1])
        #expect(try nms(boxes: seventh, scores: [0.9, 0.8], iouThreshold: Double(Float(0.7).nextDown)) == [0])
    }

    @Test("ties keep ascending index order; zero-area boxes never suppress")
    func ties() throws {
        let same = FloatBox(x0: 0, y0: 0, x1: 10, y1: 10)
        #expect(try nms(boxes: [same, same, same], scores: [0.5, 0.5, 0.5], iouThreshold: 0.7) == [0])
        #expect(try nms(boxes: [same, same, same], scores: [0.4, 0.5, 0.5], iouThreshold: 0.7) == [1])
        let point = FloatBox(x0: 3, y0: 3, x1: 3, y1: 3)
        #expect(try nms(boxes: [point, point], scores: [1, 1], iouThreshold: 0) == [0, 1])
        #expect(try batchedNMS(boxes: [same, same], scores: [1, 1], categories: [0, 1], iouThreshold: 0.5) == [0, 1])
        #expect(try batchedNMS(boxes: [], scores: [], categories: [], iouThreshold: 0.5) == [])
        #expect(throws: SAMEverythingError.self) { try nms(boxes: [same], scores: [], iouThreshold: 0.5) }
    }
}
