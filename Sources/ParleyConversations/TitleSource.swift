/// Where a conversation's title comes from after its first answer (`PARLEY_TITLES`). A team that
/// does not want an extra model call per conversation (cost, or what the model sees) picks `words`.
public enum TitleSource: String, Sendable, Equatable {
    /// One small request to the conversation's model; the first words of the question if it fails
    /// (and always for the demo model).
    case model
    /// The first words of the question, without asking the model.
    case words
    /// Titles stay as created ("New conversation" until renamed).
    case off
}
