// segment-photo MODEL.samw PHOTO X Y: loads a converted model, sets the photo, predicts masks for one
// foreground point and prints the best one. Uses only the runtime product's public API (and
// SAMImageFiles to read the photo), so its binary links no converter library.
import Foundation
import SAMImageFiles
import SAMKernels
import SAMPipeline

let arguments = CommandLine.arguments
guard arguments.count == 5, let x = Float(arguments[3]), let y = Float(arguments[4]) else {
    FileHandle.standardError.write(Data("usage: segment-photo MODEL.samw PHOTO X Y\n".utf8))
    exit(2)
}
// This process is the app's own, so it opts into the process-wide settings.
Kernels.tuneProcessForInference()
do {
    let segmenter = try Segmenter(contentsOf: URL(fileURLWithPath: arguments[1]))
    let image = try await segmenter.encode(try ImageIO.read(arguments[2]))
    let prediction = try segmenter.predict(Prompt(points: [.init(x: x, y: y, .foreground)]), on: image)
    let best = prediction.bestMask
    print("best mask \(prediction.best): score \(prediction.bestScore), \(best.reduce(0) { $0 + Int($1) }) of \(best.count) pixels")
} catch {
    FileHandle.standardError.write(Data("segment-photo: \(error)\n".utf8))
    exit(1)
}
