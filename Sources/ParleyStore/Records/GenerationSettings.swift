/// A conversation's sampling settings, sent with every reply of it to the provider; nil leaves the
/// provider's default. Ranges are checked where a client sets them (`temperature` 0–2, `top_p` 0–1,
/// `max_tokens` 1–`PARLEY_MAX_TOKENS_LIMIT`); the store keeps what it is given.
public struct GenerationSettings: Sendable, Equatable {
    public var temperature: Double?
    public var topP: Double?
    public var maxTokens: Int?

    public init(temperature: Double? = nil, topP: Double? = nil, maxTokens: Int? = nil) {
        self.temperature = temperature
        self.topP = topP
        self.maxTokens = maxTokens
    }

    /// These settings with every field `override` sets taken from it (a request's own values for one call).
    public func overridden(by override: GenerationSettings?) -> GenerationSettings {
        guard let override else { return self }
        return GenerationSettings(temperature: override.temperature ?? temperature, topP: override.topP ?? topP,
                                  maxTokens: override.maxTokens ?? maxTokens)
    }
}

/// A change to some of a conversation's generation settings: for each field nil leaves it as it is,
/// `.some(nil)` clears it (back to the provider's default).
public struct GenerationSettingsChange: Sendable, Equatable {
    public var temperature: Double??
    public var topP: Double??
    public var maxTokens: Int??

    public init(temperature: Double?? = nil, topP: Double?? = nil, maxTokens: Int?? = nil) {
        self.temperature = temperature
        self.topP = topP
        self.maxTokens = maxTokens
    }

    public var isEmpty: Bool { temperature == nil && topP == nil && maxTokens == nil }
}
