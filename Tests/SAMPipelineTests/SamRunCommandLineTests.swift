import Foundation
import SAMConvert
import SAMFormats
import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

let samrunTool = CommandLineTool("samrun")

/// samrun as users call it: outputs on success; on bad input a message, exit 2, no signal, no outputs.
@Suite("Pipeline: the samrun command line")
struct SamRunCommandLineTests {
    @Test("A run writes every output; --embeddings reuses them and gives the same masks")
    func outputsAndReuse() throws {
        let folder = try TinyPipeline.folder()
        let model = try TinyPipeline.model(in: folder)
        let photo = try TinyPipeline.photo(in: folder)
        let first = try samrunTool.run([model, photo, "--point", "60,40", "--point", "20,30,0", "--out", folder + "/first"])
        #expect(first.status == 0, "\(first.stderr)")
        let expected = ["image_embeddings.npy", "image_embeddings.json", "low_res_masks.npy", "iou_predictions.npy", "mask_1.png", "mask_2.png", "mask_3.png",
                        "overlay.png", "result.json"]
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: folder + "/first")) == Set(expected))
        #expect(try NPY.read(folder + "/first/low_res_masks.npy").shape == [1, 4, 32, 32])

        let second = try samrunTool.run([model, photo, "--point", "60,40", "--point", "20,30,0", "--embeddings",
                                         folder + "/first/image_embeddings.npy", "--out", folder + "/second"])
        #expect(second.status == 0, "\(second.stderr)")
        let masks = try NPY.read(folder + "/first/low_res_masks.npy"), reused = try NPY.read(folder + "/second/low_res_masks.npy")
        #expect(masks.isBitwiseEqual(to: reused))
        let result = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/second/result.json"))) as? [String: Any]
        #expect(result?["reused_embeddings"] as? Bool == true)

        // result.json's seconds: every stage that ran, by its name; reused embeddings ran no image stage.
        let profiled = try samrunTool.run([model, photo, "--point", "60,40", "--profile", "--out", folder + "/profiled"])
        #expect(profiled.status == 0, "\(profiled.stderr)")
        let imageStages: Set = ["preprocess", "image_encoder"]
        let otherStages: Set = ["prompt_encoder+mask_decoder", "postprocess", "load_model", "read_image"]
        for (run, stages) in [("first", imageStages.union(otherStages)), ("second", otherStages), ("profiled", imageStages.union(otherStages))] {
            let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/\(run)/result.json"))) as? [String: Any]
            let seconds = try #require(json?["seconds"] as? [String: Double], "\(run)")
            #expect(Set(seconds.keys) == stages, "\(run)")
            #expect(seconds.values.allSatisfy { $0 >= 0 && $0.isFinite }, "\(run)")
        }
    }

    @Test("result.json records how the file stores its weights and whether int8 products ran")
    func storageRecorded() throws {
        let folder = try TinyPipeline.folder()
        let photo = try TinyPipeline.photo(in: folder)
        var request = ConversionRequest(inputs: [TestPaths.tinyReferences + "/mobile_sam.h5"], output: folder + "/int8.samw")
        request.configFile = TestPaths.tinyReferences + "/config.json"
        request.precision = .int8
        _ = try Converter.run(request)
        for (model, dtype) in [(try TinyPipeline.model(in: folder), "f32"), (request.output, "int8")] {
            let out = folder + "/" + dtype
            let run = try samrunTool.run([model, photo, "--point", "60,40", "--out", out])
            #expect(run.status == 0, "\(run.stderr)")
            let result = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/result.json"))) as? [String: Any]
            #expect(result?["weight_dtype"] as? String == dtype)
            #expect(result?["int8_products"] as? Bool == false)
        }
    }

    @Test("--bf16 is recorded with the embeddings; a float32 run refuses to reuse them unless forced")
    func bfloat16() throws {
        let folder = try TinyPipeline.folder()
        let model = try TinyPipeline.model(in: folder)
        let photo = try TinyPipeline.photo(in: folder)
        let reduced = try samrunTool.run([model, photo, "--point", "60,40", "--bf16", "--out", folder + "/bf16"])
        guard Kernels.bfloat16Available else {
            #expect(reduced.status == 2 && reduced.stderr.contains("AVX512_BF16"), "\(reduced.stderr)")
            #expect(!FileManager.default.fileExists(atPath: folder + "/bf16"))
            return
        }
        #expect(reduced.status == 0, "\(reduced.stderr)")
        let result = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/bf16/result.json"))) as? [String: Any]
        #expect(result?["linear_precision"] as? String == "bfloat16")
        let sidecar = try String(contentsOfFile: folder + "/bf16/image_embeddings.json", encoding: .utf8)
        #expect(sidecar.contains(#""linear_precision" : "bfloat16""#))
        let reuse = [model, photo, "--point", "60,40", "--embeddings", folder + "/bf16/image_embeddings.npy"]
        let refused = try samrunTool.run(reuse + ["--out", folder + "/refused"])
        #expect(refused.status == 2 && refused.stderr.contains("computed with bfloat16 linear layers, this run uses float32"),
                "\(refused.stderr)")
        #expect(try samrunTool.run(reuse + ["--force", "--out", folder + "/forced"]).status == 0)
        #expect(try samrunTool.run(reuse + ["--bf16", "--out", folder + "/same"]).status == 0)
    }

    @Test("Bad input: a message naming the problem, exit 2, no crash, nothing written")
    func badInput() throws {
        let folder = try TinyPipeline.folder()
        let model = try TinyPipeline.model(in: folder)
        let photo = try TinyPipeline.photo(in: folder)
        let notAnImage = folder + "/notes.png"
        try Data("not a png".utf8).write(to: URL(fileURLWithPath: notAnImage))
        let wrongEmbeddings = folder + "/wrong.npy"
        try NPY.write(Tensor(shape: [1, 32, 4, 4], floats: [Float](repeating: 0, count: 512)), to: wrongEmbeddings)
        let manyPoints = (0..<101).flatMap { _ in ["--point", "5,5"] }
        let cases: [(arguments: [String], says: String)] = [
            ([model, photo, "--point", "500,40"], "outside"),
            ([model, photo, "--point", "60"], "--point '60'"),
            ([model, photo, "--point", "a,b"], "--point 'a,b'"),
            ([model, photo, "--point", "60,40,7"], "LABEL"),
            ([model, photo, "--box", "50,10,40,20"], "x1 < x0"),
            ([model, photo] + manyPoints, "1...100"),
            ([model, photo, "--point", "60,40", "--embeddings", wrongEmbeddings], "carry no record"),
            ([model, photo, "--point", "60,40", "--embeddings", wrongEmbeddings, "--force"], "[1,32,8,8]"),
            ([model, notAnImage, "--point", "1,1"], notAnImage),
            ([model, folder + "/missing.png", "--point", "1,1"], "missing.png"),
            ([folder + "/missing.samw", photo, "--point", "1,1"], "missing.samw"),
        ]
        for (index, testCase) in cases.enumerated() {
            let out = folder + "/out\(index)"
            let run = try samrunTool.run(testCase.arguments + ["--out", out])
            #expect(run.status == 2 && !run.crashed, "\(testCase.arguments): status \(run.status)")
            #expect(run.stderr.contains(testCase.says), "\(testCase.arguments): \(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out), "\(testCase.arguments) left \(out)")
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains("staging") }
        #expect(leftovers.isEmpty)
    }
}
