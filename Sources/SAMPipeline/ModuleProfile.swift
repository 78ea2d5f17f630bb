import Foundation
import SAMModel

/// Where the time goes inside one model call, from the model's per-module observer.
///
/// The observer fires after each named module in execution order; the time since the previous
/// callback (or since `start()`) is charged to the module that just finished. Nested modules
/// finish before their parent, so charging each interval to the callback's path cut to `depth`
/// dot-separated components ("image_encoder.layers.0.blocks.0" at depth 5) sums children into
/// their parent at that depth. Time after the last callback is charged to "(after last module)".
/// The observer only reads the clock: the model's outputs and numerics are unchanged.
package final class ModuleProfile {
    /// How many dot-separated parts of a module path a row keeps.
    package let depth: Int
    /// Seconds charged to each row's key.
    package private(set) var seconds: [String: Double] = [:]
    /// The keys in the order they were first charged (execution order).
    package private(set) var order: [String] = []
    private var last: UInt64 = 0
    private var started: UInt64 = 0
    /// Seconds from `start()` to `finish()`, summed over every pair.
    package private(set) var total: Double = 0

    /// A profile whose rows are module paths cut to `depth` parts.
    package init(depth: Int) { self.depth = depth }

    /// The key a module path is charged to: ":keys"-style output suffixes dropped, cut to `depth` parts.
    package func key(_ path: String) -> String {
        let base = path.split(separator: ":", maxSplits: 1).first.map(String.init) ?? path
        return base.split(separator: ".").prefix(depth).joined(separator: ".")
    }

    /// Starts the clock for one model call.
    package func start() {
        started = DispatchTime.now().uptimeNanoseconds
        last = started
    }

    /// The observer to hand the model call: charges each interval to the module that just finished.
    package var observer: ModuleObserver {
        { [unowned self] path, _ in
            let t = DispatchTime.now().uptimeNanoseconds
            self.charge(self.key(path), t)
        }
    }

    /// Stops the clock: what ran after the last module is charged to "(after last module)".
    package func finish() {
        let t = DispatchTime.now().uptimeNanoseconds
        if t > last { charge("(after last module)", t) }
        total += Double(t - started) / 1e9  // summed over start/finish pairs
    }

    private func charge(_ key: String, _ t: UInt64) {
        if seconds[key] == nil { order.append(key) }
        seconds[key, default: 0] += Double(t - last) / 1e9
        last = t
    }

    /// Rows sorted by time, largest first.
    package var rows: [(module: String, seconds: Double, share: Double)] {
        let sum = max(total, 1e-12)
        return seconds.map { ($0.key, $0.value, $0.value / sum) }.sorted { $0.1 > $1.1 }
    }

    /// The rows as a text table (milliseconds and share), the `top` largest or all, then the total.
    package func table(top: Int? = nil) -> String {
        let shown = top.map { Array(rows.prefix($0)) } ?? rows
        let width = max(6, shown.map(\.module.count).max() ?? 6)
        var lines = ["\("module".padding(toLength: width, withPad: " ", startingAt: 0))        ms   share"]
        for row in shown {
            lines.append(row.module.padding(toLength: width, withPad: " ", startingAt: 0)
                         + String(format: " %9.2f  %5.1f%%", row.seconds * 1000, row.share * 100))
        }
        lines.append("total".padding(toLength: width, withPad: " ", startingAt: 0) + String(format: " %9.2f  100.0%%", total * 1000))
        return lines.joined(separator: "\n")
    }

    /// For result.json: depth, total seconds, and the rows in execution order of first appearance and sorted.
    package var json: [String: Any] {
        [
            "depth": depth,
            "total_seconds": total,
            "modules": rows.map { ["module": $0.module, "seconds": $0.seconds, "share": $0.share] as [String: Any] },
            "execution_order": order,
        ]
    }
}
