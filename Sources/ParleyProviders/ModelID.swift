/// A model id as clients send it: `provider:model` (`openai:llama3`, `anthropic:claude-x`), the demo's
/// `demo`, or a bare model name that stands for it at the one provider listing it. Every id is made
/// and split here: the registry, the providers' listings and the server's model checks all ask this.
public enum ModelID {
    /// The id of `model` as served by the provider named `provider`.
    public static func make(provider: String, model: String) -> String {
        "\(provider):\(model)"
    }

    /// The provider's name and its own name for the model, split at the first `:` (a model name may
    /// hold more); nil for an id without a provider (`demo`, a bare name). Either part may be empty.
    public static func split(_ id: String) -> (provider: Substring, model: Substring)? {
        guard let colon = id.firstIndex(of: ":") else { return nil }
        return (id[..<colon], id[id.index(after: colon)...])
    }
}
