import Foundation
import SAMImageFiles
import SAMPipeline
import SAMTestSupport
import Testing

/// The README's Swift API examples, compiled and run here on the tiny model so they cannot rot; a
/// third test checks that README.md shows exactly the code between the markers.
@Suite("README examples")
struct ReadmeExampleTests {
    @Test("The Segmenter example compiles and runs")
    func segmenterExample() async throws {
        let folder = try TinyPipeline.folder()
        let modelURL = URL(fileURLWithPath: try TinyPipeline.model(in: folder))
        let photoURL = URL(fileURLWithPath: try TinyPipeline.photo(in: folder))

        // --- README example begins
        let segmenter = try Segmenter(contentsOf: modelURL)                             // Sendable: share it between tasks
        let image = try await segmenter.encode(try ImageIO.read(contentsOf: photoURL))  // resize, normalise, pad, encode; cancellable
        let prediction = try segmenter.predict(Prompt(points: [.init(x: 60, y: 40, .foreground)]), on: image)
        let scores = prediction.scores                                                  // IoU predictions of masks 1, 2, 3
        let best = prediction.bestMask                                                  // 0/1 per pixel, the highest-scoring mask
        // --- README example ends

        try Self.checkBest(prediction, scores: scores, best: best)
    }

    @Test("The SegmentAnything example compiles and runs")
    func predictorExample() throws {
        let folder = try TinyPipeline.folder()
        let modelPath = try TinyPipeline.model(in: folder)
        let photoPath = try TinyPipeline.photo(in: folder)

        // --- README example begins
        let predictor = try SegmentAnything(modelPath: modelPath)
        try predictor.setImage(try ImageIO.read(photoPath))                 // once per image, as SamPredictor.set_image
        let prediction = try predictor.predict(Prompt(points: [.init(x: 60, y: 40, label: 1)]))
        let best = prediction.bestMask
        // --- README example ends

        try Self.checkBest(prediction, scores: prediction.scores, best: best)
    }

    @Test("README.md shows the code of both examples as it is here")
    func readmeShowsTheseExamples() throws {
        let readme = try String(contentsOfFile: TestPaths.packageRoot + "/README.md", encoding: .utf8)
        let source = try String(contentsOfFile: #filePath, encoding: .utf8)
        let examples = source.components(separatedBy: "// --- README example begins\n").dropFirst().map { part in
            part.components(separatedBy: "        // --- README example ends")[0]
                .split(separator: "\n", omittingEmptySubsequences: false).map { $0.dropFirst(8) }.joined(separator: "\n")
        }
        #expect(examples.count == 2)
        for example in examples {
            #expect(readme.contains(example), "README.md lacks:\n\(example)")
        }
    }

    static func checkBest(_ prediction: Prediction, scores: [Float], best: ArraySlice<UInt8>) throws {
        #expect(scores.count == 3)
        #expect(best.count == 85 * 128)
        // The best mask is the selected mask with the highest IoU prediction.
        let position = try #require(scores.indices.max { scores[$0] < scores[$1] })
        #expect(prediction.bestPosition == position)
        #expect(prediction.bestScore == scores[position])
        #expect(best == prediction.masks.mask(position))
    }
}
