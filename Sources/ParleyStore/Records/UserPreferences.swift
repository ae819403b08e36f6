/// One person's preferences (migration 11): kept on the server so they follow the person from device to
/// device, and used for the conversations they start. Local mode's one user has one set. The store
/// keeps what it is given; the API checks the values (a model the caller may use, the system prompt
/// limit) where they are set.
public struct UserPreferences: Sendable, Equatable {
    /// The page's colour scheme: the browser's (`system`) or one chosen whatever the browser says.
    public enum Theme: String, Sendable, CaseIterable {
        case system, light, dark
    }

    /// What sends a message in the composer: Enter (Shift+Enter a new line), or Ctrl/Cmd+Enter
    /// (Enter a new line).
    public enum SendKey: String, Sendable, CaseIterable {
        case enter
        case ctrlEnter = "ctrl_enter"
    }

    public var theme: Theme
    /// The model of a new conversation; nil: the page's own choice (the server's default).
    public var defaultModel: String?
    /// The system prompt of a new conversation; nil: none.
    public var defaultSystemPrompt: String?
    public var sendKey: SendKey

    /// What a person who never set anything has.
    public static let defaults = UserPreferences()

    public init(theme: Theme = .system, defaultModel: String? = nil, defaultSystemPrompt: String? = nil,
                sendKey: SendKey = .enter) {
        self.theme = theme
        self.defaultModel = defaultModel
        self.defaultSystemPrompt = defaultSystemPrompt
        self.sendKey = sendKey
    }

    /// A change to some fields: nil leaves a field as it is; for the optional ones `.some(nil)` clears it.
    public struct Change: Sendable, Equatable {
        public var theme: Theme?
        public var defaultModel: String??
        public var defaultSystemPrompt: String??
        public var sendKey: SendKey?

        public init(theme: Theme? = nil, defaultModel: String?? = nil, defaultSystemPrompt: String?? = nil,
                    sendKey: SendKey? = nil) {
            self.theme = theme
            self.defaultModel = defaultModel
            self.defaultSystemPrompt = defaultSystemPrompt
            self.sendKey = sendKey
        }

        /// `preferences` with this change applied.
        public func applied(to preferences: UserPreferences) -> UserPreferences {
            var result = preferences
            if let theme { result.theme = theme }
            if let defaultModel { result.defaultModel = defaultModel }
            if let defaultSystemPrompt { result.defaultSystemPrompt = defaultSystemPrompt }
            if let sendKey { result.sendKey = sendKey }
            return result
        }
    }

    // MARK: - Row decoding

    /// The columns every preferences query selects, in the order `init(row:)` reads.
    static let columns = "theme, default_model, default_system_prompt, send_key"

    /// A stored row; a value this build does not know (written by a later one) reads as the default.
    init(row: Row) {
        self.init(theme: Theme(rawValue: row.text(0)) ?? .system, defaultModel: row.optionalText(1),
                  defaultSystemPrompt: row.optionalText(2), sendKey: SendKey(rawValue: row.text(3)) ?? .enter)
    }
}
