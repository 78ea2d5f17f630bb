// read-video VIDEO: opens a video file, decodes every frame and prints the clip's size and the mean
// of its pixels. Uses SAMVideoFiles with the runtime product and no image-file product, so its binary
// links FFmpeg's libraries and no libpng or libjpeg (nor any converter library).
import Foundation
import SAMImage
import SAMVideoFiles

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: read-video VIDEO\n".utf8))
    exit(2)
}
do {
    let video = try VideoFile(contentsOf: URL(fileURLWithPath: arguments[1]))
    var total = 0, count = 0
    for position in 0..<video.frameCount {
        let frame = try video.frame(at: position)
        total += frame.pixels.reduce(0) { $0 + Int($1) }
        count += frame.pixels.count
    }
    print("\(video.frameCount) frames of \(video.frameSize.width)x\(video.frameSize.height) (\(video.codecName)), "
          + "mean \(Double(total) / Double(max(count, 1)))")
} catch {
    FileHandle.standardError.write(Data("read-video: \(error)\n".utf8))
    exit(1)
}
