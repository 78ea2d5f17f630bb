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

    /// The drop's `mobile_sam.h5` (full-size MobileSAM), optionally with its dense-PE blob -> `folder/drop.samw`.
    public static func drop(in folder: String, withImagePE: Bool = false) throws -> String {
        var request = ConversionRequest(inputs: [TestPaths.drop + "/mobile_sam.h5"], output: folder + "/drop.samw")
        if withImagePE { request.imagePE = TestPaths.drop + "/image_points_embeddings.bin" }
        _ = try Converter.run(request)
        return request.output
    }
}
