import Foundation
import SAMConvert

/// Models under test, made the way users make them: samconvert's library on committed or outside weights.
public enum TestModels {
    /// `reference_outputs/tiny/mobile_sam.h5` + its config.json -> `folder/tiny.samw`.
    public static func tiny(in folder: String) throws -> String {
        var request = ConversionRequest(inputs: [TestPaths.tinyReferences + "/mobile_sam.h5"], output: folder + "/tiny.samw")
        request.configFile = TestPaths.tinyReferences + "/config.json"
        _ = try Converter.run(request)
        return request.output
    }

    /// `reference_outputs/sam2_tiny`'s checkpoint + its config.json -> `folder/sam2_tiny.samw`.
    public static func sam2Tiny(in folder: String) throws -> String {
        var request = ConversionRequest(inputs: [TestPaths.sam2TinyCheckpoint], output: folder + "/sam2_tiny.samw")
        request.configFile = TestPaths.sam2TinyReferences + "/config.json"
        _ = try Converter.run(request)
        return request.output
    }

    /// The full-size set's `mobile_sam.h5` (full-size MobileSAM), optionally with its dense-PE blob -> `folder/fullSet.samw`.
    public static func fullSizeSet(in folder: String, withImagePE: Bool = false) throws -> String {
        var request = ConversionRequest(inputs: [TestPaths.fullSizeSet + "/mobile_sam.h5"], output: folder + "/fullSet.samw")
        if withImagePE { request.imagePE = TestPaths.fullSizeSet + "/image_points_embeddings.bin" }
        _ = try Converter.run(request)
        return request.output
    }
}
