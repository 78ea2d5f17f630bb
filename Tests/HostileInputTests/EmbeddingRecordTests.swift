import Foundation
import SAMTestSupport
import Testing

/// `samrun --embeddings` binds every feature file to its record: a map of another image or model put
/// beside the right ones (SAM 2's high-resolution maps, SAM's embedding) is refused naming the map,
/// within a second, nothing written.
@Suite("Hostile inputs: cached feature maps that do not belong together", .serialized)
struct EmbeddingRecordTests {
    /// The committed tiny SAM 2.1 model (Hiera with high-resolution maps), converted once.
    static let sam2Model: Result<String, Error> = Result {
        let tiny = HostileCorpus.root + "/reference_outputs/sam2_tiny"
        let out = try Hostile.folder() + "/sam2-tiny.samw"
        let run = try samconvert.run([tiny + "/sam2.1_hiera_tiny_widths.pt", "--config", tiny + "/config.json", "--out", out])
        guard run.status == 0 else { throw Hostile.ConversionFailed(stderr: run.stderr) }
        return out
    }

    /// Runs samrun on `model` twice, on the demo photo and on a black image of its size, into `a` and `b`.
    static func twoRuns(_ model: String, in folder: String) throws -> (a: String, b: String, photo: String) {
        let black = folder + "/black.png"
        try HostileImages.png(width: 128, height: 85, rgb: true, rows: 85).write(to: URL(fileURLWithPath: black))
        for (image, out) in [(Hostile.photo, folder + "/a"), (black, folder + "/b")] {
            let run = try samrun.run([model, image, "--point", "10,10", "--out", out])
            #expect(run.status == 0, "\(run.stderr)")
        }
        return (folder + "/a", folder + "/b", Hostile.photo)
    }

    @Test("SAM 2: high_res_feats_0 or _1 of another image beside image_embed.npy is refused naming the map")
    func sam2HighResolutionMaps() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let model = try Self.sam2Model.get()
        let (a, b, photo) = try Self.twoRuns(model, in: folder)
        let record = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: a + "/image_embed.json"))) as? [String: Any]
        let digests = (record?["computed_from"] as? [String: Any])?["feature_sha256"] as? [String: String]
        #expect(digests?.keys.sorted() == ["high_res_feats_0", "high_res_feats_1", "image_embed"], "\(String(describing: record))")

        // The cached features as written: accepted.
        let reused = try samrun.run([model, photo, "--point", "10,10", "--embeddings", a + "/image_embed.npy", "--out", folder + "/reused"])
        #expect(reused.status == 0, "\(reused.stderr)")
        for name in ["high_res_feats_0", "high_res_feats_1"] {
            let mixed = folder + "/mixed-" + name
            try FileManager.default.copyItem(atPath: a, toPath: mixed)
            try FileManager.default.removeItem(atPath: mixed + "/\(name).npy")
            try FileManager.default.copyItem(atPath: b + "/\(name).npy", toPath: mixed + "/\(name).npy")
            try HostileRun(label: "SAM 2 --embeddings with \(name) of another image", tool: samrun,
                           arguments: [model, photo, "--point", "10,10", "--embeddings", mixed + "/image_embed.npy", "--out", folder + "/run"],
                           mentions: ["\(name) is not the map the record was written with", "--force"], output: folder + "/run",
                           seconds: 1).check()
        }
    }

    @Test("SAM: an image_embeddings.npy of another image under the right record is refused; a record without digests too")
    func samEmbedding() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let model = try Hostile.goodModel.get()
        let (a, b, photo) = try Self.twoRuns(model, in: folder)
        try FileManager.default.removeItem(atPath: a + "/image_embeddings.npy")
        try FileManager.default.copyItem(atPath: b + "/image_embeddings.npy", toPath: a + "/image_embeddings.npy")
        try HostileRun(label: "SAM --embeddings of another image under this image's record", tool: samrun,
                       arguments: [model, photo, "--point", "10,10", "--embeddings", a + "/image_embeddings.npy", "--out", folder + "/run"],
                       mentions: ["image_embeddings is not the map the record was written with"], output: folder + "/run",
                       seconds: 1).check()
        // A record written before records held digests binds no map.
        let sidecar = b + "/image_embeddings.json"
        var object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: sidecar))) as! [String: Any]
        var computed = object["computed_from"] as! [String: Any]
        computed.removeValue(forKey: "feature_sha256")
        object["computed_from"] = computed
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: sidecar))
        let black = folder + "/black.png"
        try HostileRun(label: "SAM --embeddings whose record holds no digests", tool: samrun,
                       arguments: [model, black, "--point", "10,10", "--embeddings", b + "/image_embeddings.npy", "--out", folder + "/run"],
                       mentions: ["holds no digest of the feature maps"], output: folder + "/run", seconds: 1).check()
        let forced = try samrun.run([model, black, "--point", "10,10", "--embeddings", b + "/image_embeddings.npy", "--force",
                                     "--out", folder + "/forced"])
        #expect(forced.status == 0, "--force uses them anyway: \(forced.stderr)")
    }
}
