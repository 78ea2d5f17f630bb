import SAMKernels
import SAMTensor

extension EfficientViT {
    /// ops.py ResidualBlock with an IdentityLayer shortcut (`path.main`, `path.shortcut`): main(x) + x.
    /// `main` reports its own output (`path.main`) and takes the residual to fuse when unobserved.
    /// ref: ops.py ResidualBlock.forward — forward_main(x) + shortcut(x)
    static func residual(_ x: FloatTensor, path: String, observer: ModuleObserver?,
                         main: (FloatTensor, FloatTensor?, ModuleObserver?) -> FloatTensor) -> FloatTensor {
        guard let observer else { return main(x, x, nil) }
        var y = main(x, nil, observer)
        observer("\(path).shortcut", x)
        Kernels.add(&y, x)
        observer(path, y)
        return y
    }
}
