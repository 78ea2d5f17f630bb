/// A feature map's spatial size (upstream's `input_resolution` / `patches_resolution` tuples).
public struct GridSize: Sendable, Equatable, CustomStringConvertible {
    public var height: Int
    public var width: Int

    public init(height: Int, width: Int) {
        self.height = height
        self.width = width
    }

    public var count: Int { height * width }
    public var description: String { "\(height)x\(width)" }
}

extension TinyViT {
    public typealias GridSize = SAMModel.GridSize
}
