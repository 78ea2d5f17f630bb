// Fails when a public symbol of the named targets has no doc comment.
//
//     swift scripts/check-doc-comments.swift [--scratch-path .build] TARGET...
//
// Reads the symbol graphs `swift package generate-documentation --target TARGET` extracted (public
// symbols only, as DocC documents them: <scratch>/<triple>/extracted-symbols/<package>/TARGET/) and
// prints `file:line: TARGET: kind name has no doc comment` for every symbol declared in the target's
// sources that has none, then exits 1. Symbols the compiler synthesizes (Equatable's `!=`,
// RawRepresentable's `init(rawValue:)`, a protocol extension's default members) have no source line
// and are not counted. A declaration that implements a requirement of one of this package's own
// protocols may take that requirement's comment (DocC shows it there too); one inherited from the
// standard library or Foundation (`description`, `init(from:)`) does not count: say what it does here.
// DocC's `--experimental-documentation-coverage` cannot tell those apart, hence the graphs.
import Foundation

let fileManager = FileManager.default
var arguments = Array(CommandLine.arguments.dropFirst())
var scratch = ".build"
if let index = arguments.firstIndex(of: "--scratch-path"), index + 1 < arguments.count {
    scratch = arguments[index + 1]
    arguments.removeSubrange(index...index + 1)
}
guard !arguments.isEmpty, !arguments.contains(where: { $0.hasPrefix("-") }) else {
    FileHandle.standardError.write(Data("usage: swift scripts/check-doc-comments.swift [--scratch-path DIR] TARGET...\n".utf8))
    exit(2)
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("check-doc-comments: \(message)\n".utf8))
    exit(2)
}

func modified(_ path: String) -> Date {
    (try? fileManager.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? .distantPast
}

func files(under folder: String, endingIn suffix: String) -> [String] {
    guard let walker = fileManager.enumerator(atPath: folder) else { return [] }
    return walker.compactMap { $0 as? String }.filter { $0.hasSuffix(suffix) }.map { folder + "/" + $0 }
}

/// This package's modules: a comment inherited from one of them counts, one from elsewhere does not.
let packageModules = Set((try? fileManager.contentsOfDirectory(atPath: "Sources")) ?? [])
let root = fileManager.currentDirectoryPath

var undocumented: [(file: String, line: Int, text: String)] = []
var checked = 0
for target in arguments {
    // <scratch>/<triple>/extracted-symbols/<package identity>/<target>: the newest, should a renamed
    // checkout have left another.
    let candidates = ((try? fileManager.contentsOfDirectory(atPath: scratch)) ?? []).flatMap { triple in
        let extracted = "\(scratch)/\(triple)/extracted-symbols"
        return ((try? fileManager.contentsOfDirectory(atPath: extracted)) ?? []).map { "\(extracted)/\($0)/\(target)" }
    }.filter { !files(under: $0, endingIn: ".symbols.json").isEmpty }
    guard let folder = candidates.max(by: { modified($0) < modified($1) }) else {
        fail("no symbol graph for \(target) under \(scratch): run `swift package generate-documentation --target \(target)` first")
    }
    let graphs = files(under: folder, endingIn: ".symbols.json")
    let extractedAt = graphs.map(modified).min() ?? .distantPast
    if let newer = files(under: "Sources/\(target)", endingIn: ".swift").first(where: { modified($0) > extractedAt }) {
        fail("\(newer) changed after \(target)'s symbol graph was extracted: generate its documentation again")
    }
    for graph in graphs {
        guard let data = fileManager.contents(atPath: graph),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let symbols = json["symbols"] as? [[String: Any]] else { fail("cannot read \(graph)") }
        for symbol in symbols {
            // Declared in the target's sources (synthesized members have no location), and public.
            guard let location = symbol["location"] as? [String: Any], let uri = location["uri"] as? String,
                  let access = symbol["accessLevel"] as? String, access == "public" || access == "open",
                  let kind = symbol["kind"] as? [String: Any], let kindName = kind["identifier"] as? String,
                  kindName != "swift.extension" else { continue }
            checked += 1
            let comment = symbol["docComment"] as? [String: Any]
            let lines = (comment?["lines"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }
            let origin = comment?["module"] as? String
            let documented = lines.contains { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
                && (origin == nil || origin == target || packageModules.contains(origin!))
            if documented { continue }
            let path = (URL(string: uri)?.path ?? uri).replacingOccurrences(of: root + "/", with: "")
            let line = ((location["position"] as? [String: Any])?["line"] as? Int ?? -1) + 1
            let name = (symbol["pathComponents"] as? [String])?.joined(separator: ".") ?? "?"
            let what = (kind["displayName"] as? String ?? kindName).lowercased()
            let inherited = origin.map { " (only \($0)'s, inherited)" } ?? ""
            undocumented.append((path, line, "\(target): \(what) \(name) has no doc comment\(inherited)"))
        }
    }
}

for symbol in undocumented.sorted(by: { ($0.file, $0.line) < ($1.file, $1.line) }) {
    print("\(symbol.file):\(symbol.line): \(symbol.text)")
}
if undocumented.isEmpty {
    print("check-doc-comments: all \(checked) public symbols of \(arguments.joined(separator: ", ")) have doc comments")
} else {
    FileHandle.standardError.write(Data(("check-doc-comments: \(undocumented.count) of \(checked) public symbols have no doc comment "
        + "(a `///` comment saying what it is or does)\n").utf8))
    exit(1)
}
