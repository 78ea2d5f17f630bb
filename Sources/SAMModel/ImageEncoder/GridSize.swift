/// A feature map's spatial size (upstream's `input_resolution` / `patches_resolution` tuples).
package struct GridSize: Sendable, Equatable, CustomStringConvertible {
    package var height: Int
    package var width: Int

    package init(height: Int, width: Int) {
        self.height = height
        self.width = width
    }

    package var count: Int { height * width }
    package var description: String { "\(height)x\(width)" }
}

extension TinyViT {
    package typealias GridSize = SAMModel.GridSize
}
