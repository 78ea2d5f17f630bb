import SAMImageFiles
import SAMPipeline
import Testing

/// The README's Swift API example, compiled and run here on the tiny model so it cannot rot.
@Test("The README example compiles and runs")
func readmeExample() throws {
    let folder = try TinyPipeline.folder()
    let modelPath = try TinyPipeline.model(in: folder)
    let photoPath = try TinyPipeline.photo(in: folder)

    // --- README example begins
    let segmenter = try SegmentAnything(modelPath: modelPath)
    try segmenter.setImage(try ImageIO.read(photoPath))             // resize, normalise, pad, encode: once per image
    let prediction = try segmenter.predict(Prompt(points: [.init(x: 60, y: 40, label: 1)]))
    let scores = prediction.scores                                   // IoU predictions of masks 1, 2, 3
    let best = prediction.bestMask                                   // 0/1 per pixel, the highest-scoring mask
    // --- README example ends

    #expect(scores.count == 3)
    #expect(best.count == 85 * 128)
    // The best mask is the selected mask with the highest IoU prediction.
    let position = try #require(scores.indices.max { scores[$0] < scores[$1] })
    #expect(prediction.bestPosition == position)
    #expect(prediction.bestScore == scores[position])
    #expect(best == prediction.masks.mask(position))
}
