import SAMImage
import SAMModel
import SAMTestSupport
import Testing
@testable import SAMPipeline

/// A decoder family's `PromptLayout` decides the order of box corners and points and when the padding
/// point is appended; each of the three padding rules gives its own token count.
@Suite("Pipeline: prompt layouts")
struct PromptLayoutTests {
    static let size = ImageSize(height: 85, width: 128)

    func inputs(_ prompt: Prompt, _ layout: PromptLayout) throws -> PromptInputs {
        let config = try SAMConfig(contentsOf: TestPaths.tinyReferences + "/config.json")
        return try PromptInputs(prompt, originalSize: Self.size, transform: InputTransform(SamPreprocessor(imageSize: 64)),
                                layout: layout, config: config)
    }

    @Test("padding: always, only without a box, never; box corners first or last")
    func padding() throws {
        let points = Prompt(points: [.init(x: 60, y: 40, .foreground)])
        let boxAndPoint = Prompt(points: [.init(x: 60, y: 40, .foreground)], box: Prompt.Box(x0: 10, y0: 10, x1: 100, y1: 70))
        let layouts: [(PromptLayout, points: Int, boxAndPoint: Int)] = [
            (.sam, 2, 3), (.sam2, 2, 4), (PromptLayout(boxFirst: false, paddingPoint: .never), 1, 3)]
        for (layout, pointTokens, boxTokens) in layouts {
            let onlyPoints = try inputs(points, layout), withBox = try inputs(boxAndPoint, layout)
            #expect(onlyPoints.tokenCount == pointTokens, "\(layout)")
            #expect(withBox.tokenCount == boxTokens, "\(layout)")
            #expect(onlyPoints.appendPaddingPoint == (pointTokens == 2))
            #expect(withBox.appendPaddingPoint == (boxTokens == 4))
            // Labels of the points and corners as handed to the decoder (padding added by the prompt encoder).
            #expect(withBox.labels.data == (layout.boxFirst ? [2, 3, 1] : [1, 2, 3]))
        }
    }
}
