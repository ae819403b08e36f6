import ParleyStore

/// The JSON shape of a user's preferences: every field always present (null for an unset default).
struct PreferencesResource: Encodable {
    let preferences: UserPreferences

    init(_ preferences: UserPreferences) {
        self.preferences = preferences
    }

    enum CodingKeys: String, CodingKey {
        case theme
        case defaultModel = "default_model"
        case defaultSystemPrompt = "default_system_prompt"
        case sendKey = "send_key"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(preferences.theme.rawValue, forKey: .theme)
        try container.encode(preferences.defaultModel, forKey: .defaultModel)
        try container.encode(preferences.defaultSystemPrompt, forKey: .defaultSystemPrompt)
        try container.encode(preferences.sendKey.rawValue, forKey: .sendKey)
    }
}
