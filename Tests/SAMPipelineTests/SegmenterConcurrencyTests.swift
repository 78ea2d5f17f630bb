import Foundation
import SAMImage
import SAMImageFiles
import SAMParallel
import SAMPipeline
import SAMTestSupport
import Testing

/// One `Segmenter` shared by many tasks: each task's encode and predictions give what the same calls
/// one after another give, bit for bit; cancellation stops an encode and leaves the model usable.
@Suite("Segmenter: concurrent requests and cancellation")
struct SegmenterConcurrencyTests {
    enum Model: String, CaseIterable { case mobileSAMTiny, sam2Tiny }

    static func segmenter(_ model: Model) throws -> Segmenter {
        let folder = try TestPaths.temporaryFolder("segmenter")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        switch model {
        case .mobileSAMTiny: return try Segmenter(contentsOf: URL(fileURLWithPath: try TestModels.tiny(in: folder)))
        case .sam2Tiny: return try Segmenter(modelPath: try TestModels.sam2Tiny(in: folder))
        }
    }

    /// Two photos (the tiny set's, and the same mirrored) and eight different prompts on them.
    static func requests() throws -> [(photo: RGBImage, prompt: Prompt)] {
        let folder = try TinyPipeline.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let photo = try ImageIO.read(try TinyPipeline.photo(in: folder))
        var mirrored = photo.pixels
        for y in 0..<photo.height {
            for x in 0..<photo.width / 2 {
                for channel in 0..<3 {
                    mirrored.swapAt((y * photo.width + x) * 3 + channel, (y * photo.width + photo.width - 1 - x) * 3 + channel)
                }
            }
        }
        let photos = [photo, try RGBImage(width: photo.width, height: photo.height, pixels: mirrored)]
        return (0..<8).map { index in
            let x = Float(10 + 13 * index), y = Float(15 + 7 * index)
            var prompt = Prompt(points: [.init(x: x, y: y, .foreground)])
            if index % 3 == 1 { prompt.points.append(.init(x: x / 2, y: y / 2 + 20, .background)) }
            if index % 4 == 2 { prompt.box = .init(x0: 5, y0: 5, x1: x + 20, y1: y + 20) }
            return (photos[index % 2], prompt)
        }
    }

    @Test("8 tasks encoding and predicting at once get the results of the same calls one after another",
          arguments: Model.allCases)
    func concurrentRequestsMatchSequential(model: Model) async throws {
        let segmenter = try Self.segmenter(model)
        let requests = try Self.requests()
        let sequential = try requests.map { request in
            let image = try segmenter.encodeSynchronously(request.photo)
            return (image.features, try segmenter.predict(request.prompt, on: image))
        }
        let concurrent = try await withThrowingTaskGroup(of: (Int, EncodedImage, Prediction).self) { group in
            for (index, request) in requests.enumerated() {
                group.addTask {
                    let image = try await segmenter.encode(request.photo)
                    return (index, image, try segmenter.predict(request.prompt, on: image))
                }
            }
            var results = [(EncodedImage, Prediction)?](repeating: nil, count: requests.count)
            for try await (index, image, prediction) in group { results[index] = (image, prediction) }
            return results.compactMap { $0 }
        }
        #expect(concurrent.count == 8)
        for (index, ((features, expected), (image, actual))) in zip(sequential, concurrent).enumerated() {
            #expect(image.features == features, "request \(index): features")
            #expect(actual.lowResLogits == expected.lowResLogits, "request \(index): logits")
            #expect(actual.iouPredictions == expected.iouPredictions, "request \(index): IoU")
            #expect(actual.masks == expected.masks, "request \(index): masks")
            #expect(actual.best == expected.best && actual.objectScoreLogit == expected.objectScoreLogit, "request \(index)")
        }
        // Different prompts and photos gave different answers: the comparison above compared something.
        #expect(Set(sequential.map { $0.1.iouPredictions }).count == 8)
    }

    @Test("One image predicted from 8 tasks at once: the same as one after another")
    func concurrentPredictionsOnOneImage() async throws {
        let segmenter = try Self.segmenter(.mobileSAMTiny)
        let requests = try Self.requests()
        let image = try await segmenter.encode(requests[0].photo)
        let sequential = try requests.map { try segmenter.predict($0.prompt, on: image) }
        let concurrent = try await withThrowingTaskGroup(of: (Int, Prediction).self) { group in
            for (index, request) in requests.enumerated() {
                group.addTask { (index, try segmenter.predict(request.prompt, on: image)) }
            }
            var results = [Prediction?](repeating: nil, count: requests.count)
            for try await (index, prediction) in group { results[index] = prediction }
            return results.compactMap { $0 }
        }
        #expect(concurrent.count == 8)
        for (expected, actual) in zip(sequential, concurrent) {
            #expect(actual.lowResLogits == expected.lowResLogits && actual.masks == expected.masks)
        }
    }

    @Test("An encode in a cancelled task throws CancellationError; the model works after it")
    func cancelledBeforeStart() async throws {
        let segmenter = try Self.segmenter(.mobileSAMTiny)
        let photo = try Self.requests()[0].photo
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await segmenter.encode(photo)
        }
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        let image = try await segmenter.encode(photo)
        #expect(image.features == (try segmenter.encodeSynchronously(photo)).features)
    }

    @Test("A raised stop signal skips the ranges no worker has taken, and every loop after it")
    func stopSignalSkipsWork() {
        let signal = StopSignal()
        let count = 100_000
        let ran = Counter()
        Workers.stoppable(by: signal) {
            Workers.forEach(count) { index in
                if index == 0 { signal.raise() }
                ran.add()
            }
            // A loop started after the signal runs nothing.
            Workers.forEach(count) { _ in ran.add(1_000_000) }
        }
        // Only the ranges taken before the signal ran: the first range is at most half the indices.
        #expect(ran.value <= count / 2)
        // Outside `stoppable` the same loop runs whole.
        let whole = Counter()
        Workers.forEach(count) { _ in whole.add() }
        #expect(whole.value == count)
    }
}

/// A thread-safe tally for loops that run on the workers.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var total = 0
    func add(_ amount: Int = 1) { lock.lock(); total += amount; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return total }
}
