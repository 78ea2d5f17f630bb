import Foundation
import SAMFiles
import SAMImage
import SAMImageFiles
import SAMModelFile
import SAMPipeline
import SAMTestSupport
import Testing

/// The URL forms of the file-taking APIs an app calls give what their path forms give on the
/// committed fixtures; a URL that is not a file URL is the API's own error naming it.
@Suite("Pipeline: file URLs")
struct URLOverloadTests {
    static let remote = URL(string: "https://example.com/models/tiny.samw")!

    @Test("ModelFile.load(contentsOf:) and SegmentAnything(contentsOf:) load what the path forms load")
    func modelLoads() throws {
        let folder = try TinyPipeline.folder()
        let path = try TinyPipeline.model(in: folder)
        let byPath = try ModelFile.load(path), byURL = try ModelFile.load(contentsOf: URL(fileURLWithPath: path))
        #expect(byURL.metadata == byPath.metadata)
        #expect(byURL.file.path == byPath.file.path)
        let photo = try ImageIO.read(contentsOf: URL(fileURLWithPath: try TinyPipeline.photo(in: folder)))
        let prompt = Prompt(points: [.init(x: 60, y: 40, .foreground)])
        var logits: [[Float]] = []
        for model in [byPath, byURL] {
            let segmenter = Segmenter(model: model)
            logits.append(try segmenter.predict(prompt, on: try segmenter.encodeSynchronously(photo)).lowResLogits.data)
        }
        let predictor = try SegmentAnything(contentsOf: URL(fileURLWithPath: path), verifyingChecksums: false)
        try predictor.setImage(photo)
        logits.append(try predictor.predict(prompt).lowResLogits.data)
        #expect(logits[1] == logits[0])
        #expect(logits[2] == logits[0])
    }

    @Test("A model URL that is not a file URL: ModelFileError (unreadable) or PipelineError naming it")
    func remoteModelRefused() {
        do {
            _ = try ModelFile.load(contentsOf: Self.remote)
            Issue.record("loaded a model from \(Self.remote)")
        } catch {
            guard case .format(let format) = error else { Issue.record("not a format error: \(error)"); return }
            #expect(format.code == .unreadable)
            #expect(format.file == Self.remote.absoluteString)
            #expect("\(error)".contains("https://example.com/models/tiny.samw: not a file URL"), "\(error)")
        }
        do {
            _ = try SegmentAnything(contentsOf: Self.remote)
            Issue.record("loaded a model from \(Self.remote)")
        } catch {
            guard case .invalidState(let message) = error else { Issue.record("not invalidState: \(error)"); return }
            #expect(message.contains(Self.remote.absoluteString))
        }
    }

    @Test("EmbeddingsProvenance.read(sidecar:) and sidecarURL(forEmbeddings:) with URLs, as with paths")
    func sidecar() throws {
        let folder = try TinyPipeline.folder()
        let record = EmbeddingsProvenance(originalSize: ImageSize(height: 85, width: 128), inputSize: ImageSize(height: 43, width: 64),
                                          modelIdentity: String(repeating: "b", count: 64), featureDigests: ["image_embeddings": "00"])
        for name in ["image_embeddings.npy", "features", "maps.v2.npy"] {
            let url = EmbeddingsProvenance.sidecarURL(forEmbeddings: URL(fileURLWithPath: folder + "/" + name))
            #expect(url.path == EmbeddingsProvenance.sidecarPath(forEmbeddings: folder + "/" + name))
        }
        let url = EmbeddingsProvenance.sidecarURL(forEmbeddings: URL(fileURLWithPath: folder + "/image_embeddings.npy"))
        try record.encoded().write(to: url)
        #expect(try EmbeddingsProvenance.read(sidecar: url) == record)
        #expect(try EmbeddingsProvenance.read(sidecar: url) == (try EmbeddingsProvenance.read(sidecar: url.path)))
        #expect(try EmbeddingsProvenance.read(sidecar: URL(fileURLWithPath: folder + "/none.json")) == nil)
        do {
            _ = try EmbeddingsProvenance.read(sidecar: URL(string: "https://example.com/image_embeddings.json")!)
            Issue.record("read a record from a remote URL")
        } catch {
            guard case .invalidState(let message) = error else { Issue.record("not invalidState: \(error)"); return }
            #expect(message.contains("https://example.com/image_embeddings.json is not a file URL"), "\(message)")
        }
    }

    @Test("TrackPromptFile.read(contentsOf:) and maskURL give what the path forms give on the committed video set")
    func trackPrompts() throws {
        let set = TestPaths.sam2TinyVideoReferences
        let path = set + "/prompts.json", url = URL(fileURLWithPath: path)
        let frame = try ImageIO.header(contentsOf: URL(fileURLWithPath: set + "/frames/00000.jpg"))
        let size = ImageSize(height: frame.height, width: frame.width)
        let byPath = try TrackPromptFile.read(path, frameCount: 8, frameSize: size)
        let byURL = try TrackPromptFile.read(contentsOf: url, frameCount: 8, frameSize: size)
        #expect(byURL == byPath)
        #expect(byURL.contains { $0.maskFile != nil })
        for name in byURL.compactMap(\.maskFile) + ["/absolute/mask.png"] {
            #expect(TrackPromptFile.maskURL(name, promptsFile: url).path == TrackPromptFile.maskPath(name, promptsFile: path))
        }
        // Checked against the clip as the path form is: a frame past the last is refused the same way.
        #expect(Self.promptFailure { _ = try TrackPromptFile.read(contentsOf: url, frameCount: 3, frameSize: size) }
                == Self.promptFailure { _ = try TrackPromptFile.read(path, frameCount: 3, frameSize: size) })
        let remote = URL(string: "https://example.com/prompts.json")!
        let error = Self.promptFailure { _ = try TrackPromptFile.read(contentsOf: remote, frameCount: 8, frameSize: size) }
        #expect(error?.code == .invalidValue)
        #expect(error?.source == remote.absoluteString)
        #expect(error?.message.contains("not a file URL") == true)
    }

    /// The `TrackPromptError` `body` throws (nil if it throws none).
    static func promptFailure(_ body: () throws -> Void) -> TrackPromptError? {
        do { try body() } catch let error as TrackPromptError { return error } catch { Issue.record("not a TrackPromptError: \(error)") }
        return nil
    }
}
