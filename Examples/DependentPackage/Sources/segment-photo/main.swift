// segment-photo WEIGHTS.h5 CONFIG.json PHOTO X Y: converts the weights, sets the photo, predicts
// masks for one foreground point and prints the best one. Uses only the toolkit's public API.
import Foundation
import SAMConvert
import SAMImage
import SAMKernels
import SAMPipeline

let arguments = CommandLine.arguments
guard arguments.count == 6, let x = Float(arguments[4]), let y = Float(arguments[5]) else {
    FileHandle.standardError.write(Data("usage: segment-photo WEIGHTS.h5 CONFIG.json PHOTO X Y\n".utf8))
    exit(2)
}
// This process is the app's own, so it opts into the process-wide settings.
Kernels.tuneProcessForInference()
do {
    let model = FileManager.default.temporaryDirectory.appendingPathComponent("segment-photo-\(getpid()).samw").path
    defer { try? FileManager.default.removeItem(atPath: model) }
    var request = ConversionRequest(inputs: [arguments[1]], output: model)
    request.configFile = arguments[2]
    _ = try Converter.run(request)

    let segmenter = try SegmentAnything(modelPath: model)
    try segmenter.setImage(try ImageIO.read(arguments[3]))
    let prediction = try segmenter.predict(Prompt(points: [.init(x: x, y: y, label: 1)]))
    let best = prediction.masks.mask(prediction.selected.firstIndex(of: prediction.best)!)
    print("best mask \(prediction.best): score \(prediction.scores[prediction.selected.firstIndex(of: prediction.best)!]), "
          + "\(best.reduce(0) { $0 + Int($1) }) of \(best.count) pixels")
} catch {
    FileHandle.standardError.write(Data("segment-photo: \(error)\n".utf8))
    exit(1)
}
