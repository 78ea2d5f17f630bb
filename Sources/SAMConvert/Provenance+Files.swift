import Dispatch
import Foundation
import SAMFiles
import SAMFormats
import SAMModelFile
import Synchronization

extension Provenance {
    /// Every input file with its sha256 and size.
    public static func describing(_ files: [String], converterVersion: String,
                                  shouldStop: () -> Bool = { false }) throws(ConversionFailure) -> Provenance {
        var sources: [SourceFile] = []
        for file in files {
            let digest: (hex: String, bytes: Int)?
            do { digest = try SHA256.digest(ofFile: file, shouldStop: shouldStop) } catch {
                throw ConversionFailure("\(error)")
            }
            guard let digest else { throw ConversionFailure("hashing the inputs was stopped") }
            sources.append(SourceFile(path: file, sha256: digest.hex, bytes: digest.bytes))
        }
        return Provenance(converter: "samconvert", converterVersion: converterVersion, sources: sources)
    }
}

/// `Provenance.describing` on a background thread, so hashing the inputs (~2 GB/s) overlaps the
/// import and the model check instead of following them. A conversion that fails first calls
/// `stop()`: the hash ends within one 16 MB step, before the process exits under it.
final class BackgroundProvenance: @unchecked Sendable {
    private let done = DispatchGroup()
    private let stopped = Atomic<Bool>(false)
    // Written once on the background thread before `done` is left; read only after waiting on it.
    private var result: Result<Provenance, ConversionFailure>?

    init(files: [String], converterVersion: String) {
        done.enter()
        DispatchQueue.global().async { [self] in
            result = Result { () throws(ConversionFailure) in
                try Provenance.describing(files, converterVersion: converterVersion) { stopped.load(ordering: .relaxed) }
            }
            done.leave()
        }
    }

    func wait() throws(ConversionFailure) -> Provenance {
        done.wait()
        return try result!.get()
    }

    /// Abandons the hash and waits for the thread to end. Idempotent.
    func stop() {
        stopped.store(true, ordering: .relaxed)
        done.wait()
    }
}
