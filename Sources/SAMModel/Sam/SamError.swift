/// Why the assembled model cannot run a request.
public enum SamError: Error, CustomStringConvertible, Equatable {
    /// The weights held no `component` (e.g. an encoder-only file asked to decode).
    case missingComponent(String)
    /// The image encoder refused its input.
    case imageEncoder(ImageEncoderError)
    /// The prompt encoder or mask decoder refused the prompts or their inputs.
    case prompt(PromptError)

    /// A one-line message for a person.
    public var description: String {
        switch self {
        case .missingComponent(let component):
            "the model has no \(component) (its weights were not among the inputs)"
        case .imageEncoder(let error): "\(error)"
        case .prompt(let error): "\(error)"
        }
    }
}
