/// The mask decoder of a configuration: the one its model family runs (`ModelFamily.maskDecoderFamily`).
package enum MaskDecoderFamilies {
    /// The decoder family `config` builds; nil for a model family no one knows.
    package static func family(for config: SAMConfig) -> (any MaskDecoderFamily.Type)? {
        config.family?.maskDecoderFamily
    }
}
