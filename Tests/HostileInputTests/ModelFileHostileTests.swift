import Foundation
import SAMFiles
import SAMFormats
import SAMTestSupport
import Testing

/// A `.samw` whose stored configuration or weights were changed after it was written, configs out of
/// bounds, values beyond f16 or not finite: refused at load or at conversion, naming the file, the
/// field or tensor and the bound; a model that would not load is never written.
@Suite("Hostile models: stored configuration, checksums, config files, non-finite weights", .serialized)
struct ModelFileHostileTests {
    static let config = HostileCorpus.tiny + "/config.json"

    /// The good model with its stored configuration edited (`edit` on the config object), header
    /// rewritten in place (the writer leaves room in it), tensors and checksums untouched.
    static func withStoredConfig(_ source: String, to path: String, _ edit: (inout [String: Any]) -> Void) throws {
        var bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        let length = Int(bytes[16..<24].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        var header = try JSONSerialization.jsonObject(with: bytes[24..<(24 + length)]) as! [String: Any]
        var metadata = header["metadata"] as! [String: Any]
        var config = metadata["config"] as! [String: Any]
        edit(&config)
        metadata["config"] = config
        header["metadata"] = metadata
        var json = try JSONSerialization.data(withJSONObject: header)
        precondition(json.count <= length, "the edited header does not fit")
        json.append(Data(repeating: 0x20, count: length - json.count))
        bytes.replaceSubrange(24..<(24 + length), with: json)
        try bytes.write(to: URL(fileURLWithPath: path))
    }

    /// Runs samrun and samverify on `model`; both refuse it naming `mentions`.
    func refusedAtLoad(_ label: String, _ model: String, mentions: [String], folder: String) throws {
        try HostileRun(label: label, tool: samrun, arguments: [model, Hostile.photo, "--point", "10,10", "--out", folder + "/run"],
                       mentions: [model] + mentions, output: folder + "/run").check()
        try HostileRun(label: label, tool: samverify, arguments: [model, "--references", HostileCorpus.tiny, "--quiet"],
                       mentions: [model] + mentions).check()
    }

    @Test("a stored configuration out of bounds: huge grid, maxPoints 0, a negative size, 0 heads, image size 0")
    func storedConfiguration() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let good = try Hostile.goodModel.get()
        let edits: [(String, String, (inout [String: Any]) -> Void)] = [
            ("imageEmbeddingSize 2^40", "promptEncoder.imageEmbeddingSize 1099511627776", { config in
                var prompt = config["promptEncoder"] as! [String: Any]; prompt["imageEmbeddingSize"] = 1 << 40; config["promptEncoder"] = prompt }),
            ("maxPoints 0", "maxPoints 0", { $0["maxPoints"] = 0 }),
            ("mlpDim -5", "maskDecoder.mlpDim -5", { config in
                var decoder = config["maskDecoder"] as! [String: Any]; decoder["mlpDim"] = -5; config["maskDecoder"] = decoder }),
            ("numHeads 0", "maskDecoder.numHeads 0", { config in
                var decoder = config["maskDecoder"] as! [String: Any]; decoder["numHeads"] = 0; config["maskDecoder"] = decoder }),
            ("imageSize 0", "imageEncoder.imageSize 0", { config in
                var encoder = config["imageEncoder"] as! [String: Any]; encoder["imageSize"] = 0; config["imageEncoder"] = encoder }),
        ]
        for (label, says, edit) in edits {
            let path = folder + "/" + label.replacingOccurrences(of: " ", with: "-").replacingOccurrences(of: "^", with: "") + ".samw"
            try Self.withStoredConfig(good, to: path, edit)
            try refusedAtLoad(".samw stored config \(label)", path, mentions: [says, "out of bounds"], folder: folder)
        }
    }

    @Test("a stored configuration whose parts disagree: prompt input 4x the encoder's, a grid that does not fit, widths")
    func inconsistentStoredConfiguration() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let good = try Hostile.goodModel.get()
        func editPrompt(_ key: String, _ value: Int) -> (inout [String: Any]) -> Void {
            { config in var prompt = config["promptEncoder"] as! [String: Any]; prompt[key] = value; config["promptEncoder"] = prompt }
        }
        let edits: [(String, [String], (inout [String: Any]) -> Void)] = [
            // Within every bound, but prompts would be scaled by 512 while the encoder sees 128: other masks, exit 0 before.
            ("inputImageSize 512", ["promptEncoder.inputImageSize 512", "input size 128"], editPrompt("inputImageSize", 512)),
            ("imageEmbeddingSize 16", ["promptEncoder.imageEmbeddingSize 16", "8x8 grid"], editPrompt("imageEmbeddingSize", 16)),
            ("embedDim 64", ["promptEncoder.embedDim is 64"], editPrompt("embedDim", 64)),
        ]
        for (label, says, edit) in edits {
            let path = folder + "/" + label.replacingOccurrences(of: " ", with: "-") + ".samw"
            try Self.withStoredConfig(good, to: path, edit)
            try refusedAtLoad(".samw stored config \(label)", path, mentions: says, folder: folder)
        }
    }

    @Test("config.json whose grid does not fit its input size: refused at conversion, nothing written")
    func inconsistentConfigFile() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let h5 = HostileCorpus.tiny + "/mobile_sam.h5", output = folder + "/out.samw"
        var config = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.config))) as! [String: Any]
        var prompt = config["promptEncoder"] as! [String: Any]
        prompt["imageEmbeddingSize"] = 64  // SAM's grid, on the tiny model's 128-pixel input (grid 8)
        config["promptEncoder"] = prompt
        let path = folder + "/config-grid-64.json"
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: path))
        try HostileRun(label: "config.json imageEmbeddingSize 64 on a 128 input", tool: samconvert,
                       arguments: [h5, "--config", path, "--out", output],
                       mentions: [path, "promptEncoder.imageEmbeddingSize 64 does not fit the input size"], output: output,
                       seconds: 2).check()
    }

    @Test("one weight byte changed: samrun and samverify refuse it naming the tensor; --skip-checksums runs it")
    func checksums() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let good = try Hostile.goodModel.get()
        let entry = try #require(SAMWFile(path: good).entry(named: "mask_decoder.iou_prediction_head.layers.2.bias"))
        var bytes = try Data(contentsOf: URL(fileURLWithPath: good))
        bytes[entry.offset] ^= 0x01
        let damaged = folder + "/one-byte.samw"
        try bytes.write(to: URL(fileURLWithPath: damaged))
        try refusedAtLoad(".samw one weight byte changed", damaged, mentions: [entry.name, "checksum", "[corrupt]"], folder: folder)
        let skipped = try samrun.run([damaged, Hostile.photo, "--point", "10,10", "--skip-checksums", "--out", folder + "/run"])
        #expect(skipped.status == 0, "the opt-out: \(skipped.stderr)")
    }

    @Test("config.json out of bounds, --max-points 2^63-1, f16 overflow, NaN weights: refused at conversion")
    func conversion() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let h5 = HostileCorpus.tiny + "/mobile_sam.h5", output = folder + "/out.samw"
        var config = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.config))) as! [String: Any]
        var prompt = config["promptEncoder"] as! [String: Any]
        prompt["imageEmbeddingSize"] = 1 << 31
        config["promptEncoder"] = prompt
        let bigConfig = folder + "/config-2^31.json"
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: bigConfig))
        try HostileRun(label: "config.json imageEmbeddingSize 2^31", tool: samconvert, arguments: [h5, "--config", bigConfig, "--out", output],
                       mentions: [bigConfig, "promptEncoder.imageEmbeddingSize 2147483648 is not in 1...256"], output: output).check()
        try HostileRun(label: "--max-points 9223372036854775807", tool: samconvert,
                       arguments: [h5, "--config", Self.config, "--max-points", "9223372036854775807", "--out", output],
                       mentions: ["9223372036854775807", "1...65536"], output: output).check()

        let large = folder + "/beyond-f16.h5"
        try FileManager.default.copyItem(atPath: h5, toPath: large)
        let nan = folder + "/nan.h5"
        try FileManager.default.copyItem(atPath: h5, toPath: nan)
        // Extra decoder-shaped weights are not enough: edit real ones, in place (same shape, new values).
        try Self.overwrite(large, "mask_decoder.iou_token.weight", value: 1e6)
        try Self.overwrite(nan, "mask_decoder.iou_token.weight", value: .nan)
        try HostileRun(label: "--dtype f16 of a weight beyond f16's range", tool: samconvert,
                       arguments: [large, "--config", Self.config, "--dtype", "f16", "--out", output],
                       mentions: ["mask_decoder.iou_token.weight", "beyond f16's range", "--allow-nonfinite"], output: output).check()
        try HostileRun(label: "HDF5 weight holding NaN", tool: samconvert, arguments: [nan, "--config", Self.config, "--out", output],
                       mentions: ["mask_decoder.iou_token.weight", "NaN", "--allow-nonfinite"], output: output).check()
        let allowed = try samconvert.run([nan, "--config", Self.config, "--allow-nonfinite", "--out", output])
        #expect(allowed.status == 0 && allowed.stdout.contains("written with NaN or infinity"), "\(allowed.stdout) \(allowed.stderr)")
        try FileManager.default.removeItem(atPath: output)

        // The dense positional encoding blob and an ONNX weight, each with one infinity.
        var blob = try Data(contentsOf: URL(fileURLWithPath: HostileCorpus.tiny + "/image_points_embeddings.bin"))
        var infinity = Float.infinity
        blob.replaceSubrange(40..<44, with: Data(bytes: &infinity, count: 4))
        let pe = folder + "/image_points_embeddings.bin"
        try blob.write(to: URL(fileURLWithPath: pe))
        try HostileRun(label: "--image-pe holding infinity", tool: samconvert,
                       arguments: [HostileCorpus.tiny + "/PromptEncoder.onnx", "--image-pe", pe, "--out", output],
                       mentions: ["denseImagePE", "1 infinite", "--allow-nonfinite"], output: output).check()
        let onnx = folder + "/nan.onnx"
        try HostileONNX.model(HostileONNX.graph(initializers: [
            HostileONNX.tensor("mask_decoder.iou_token.weight", dims: [4, 32], raw: HostileONNX.floats([.nan] + [Float](repeating: 0, count: 127))),
        ])).write(to: URL(fileURLWithPath: onnx))
        try HostileRun(label: "ONNX weight holding NaN", tool: samconvert, arguments: [onnx, "--out", output],
                       mentions: ["mask_decoder.iou_token.weight", "1 NaN", "nan.onnx"], output: output).check()
    }

    /// Rewrites every element of the dataset `key` of an HDF5 file to `value`.
    static func overwrite(_ path: String, _ key: String, value: Float) throws {
        let count = try elementCount(of: key, in: path)  // the reader is closed before the file is opened to write
        let builder = try HDF5Builder(appendingTo: path)
        try builder.rewrite("/" + key, values: [Float](repeating: value, count: count))
        builder.close()
    }

    static func elementCount(of key: String, in path: String) throws -> Int {
        try HDF5Builder.withLibrary { try #require(HDF5File(path: path).dataset(named: key)).shape.reduce(1, *) }
    }
}
