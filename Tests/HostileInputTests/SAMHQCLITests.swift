import Foundation
import SAMTestSupport
import Testing

/// samrun on a SAM-HQ model: `--hq-token-only` reaches the predictor and result.json records it; a
/// predictor switch the model's family does not take is refused before anything runs or is written.
@Suite("samrun: SAM-HQ's predictor switches")
struct SAMHQCLITests {
    @Test("--hq-token-only on SAM-HQ gives one mask and records the switch; on MobileSAM it is refused")
    func hqTokenOnly() throws {
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let set = TestPaths.samHQViTTinyReferences
        let model = folder + "/hq.samw"
        let convert = try samconvert.run([set + "/sam_hq.pth", "--config", set + "/config.json", "--out", model])
        #expect(convert.status == 0, "\(convert.stderr)")

        let run = try samrun.run([model, Hostile.photo, "--point", "40,30", "--hq-token-only", "--out", folder + "/hq"])
        #expect(run.status == 0, "\(run.stderr)")
        let result = try #require(try JSONSerialization.jsonObject(with: Hostile.read(folder + "/hq/result.json")) as? [String: Any])
        #expect(result["predictor_options"] as? [String] == ["hq_token_only"])
        // SAM-HQ's multimask output is the best of SAM's three masks (plus the HQ mask): one mask.
        #expect((result["masks"] as? [Any])?.count == 1, "\(result["masks"] ?? "none")")
        #expect(FileManager.default.fileExists(atPath: folder + "/hq/vit_features.npy"))

        let plain = try Hostile.goodModel.get()
        for arguments in [["--hq-token-only"], ["--predictor-option", "bogus"]] {
            let refused = try samrun.run([plain, Hostile.photo, "--point", "10,10", "--out", folder + "/plain"] + arguments)
            #expect(refused.status == 2 && refused.stderr.contains("predictor takes no option"), "\(arguments): \(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: folder + "/plain"))
        }
        let bogus = try samrun.run([model, Hostile.photo, "--point", "10,10", "--predictor-option", "bogus", "--out", folder + "/bogus"])
        #expect(bogus.status == 2 && bogus.stderr.contains("takes no option bogus (it takes: hq_token_only)"), "\(bogus.stderr)")
    }
}
