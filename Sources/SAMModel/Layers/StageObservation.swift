import SAMTensor

/// A profiler's way to observe an image encoder: its stages alone (the patch embedding, TinyViT's
/// `layers.i`, ViT's and Hiera's blocks, EfficientViT's stages, the neck), each run on the paths it
/// takes unobserved. An observer makes modules take their unfused paths, to show every module's
/// output; an observer that only reads the clock (`ModuleProfile`) would then time code that never
/// runs otherwise. `sambench profile-encoder` sets it.
package enum StageObservation {
    @TaskLocal package static var isOn = false

    /// What an encoder hands a stage: its observer, or nil when only stages are observed.
    package static func observer(for stage: ModuleObserver?) -> ModuleObserver? { isOn ? nil : stage }

    /// After a stage has run, when only stages are observed: its path and output (in the layout the
    /// encoder holds it, which a profiler does not read) to the observer.
    package static func finished(_ path: String, _ output: FloatTensor, _ observer: ModuleObserver?) {
        if isOn { observer?(path, output) }
    }
}
