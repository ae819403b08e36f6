import ParleyAccounts

/// What each user may use, beyond the live-reply caps of `GenerationLimits`: messages per minute,
/// output tokens per UTC day, and which models. Read from PARLEY_USER_*, PARLEY_MEMBER_MODELS and
/// PARLEY_LISTED_MODELS_ONLY.
public struct UsagePolicy: Sendable, Equatable {
    /// PARLEY_USER_MESSAGES_PER_MINUTE; nil: `defaultMessagesPerMinute` for the mode.
    public var messagesPerMinute: Int?
    /// PARLEY_USER_DAILY_OUTPUT_TOKENS; 0: no daily budget.
    public var dailyOutputTokens = 0
    /// PARLEY_MEMBER_MODELS: the models members may use (ids as `GET /api/models` lists them, or a
    /// bare model name for that name at any provider); nil: every model. Admins may use every model.
    public var memberModels: [String]?
    /// PARLEY_LISTED_MODELS_ONLY: only the models `GET /api/models` lists may be used, by anyone;
    /// nil: `defaultListedModelsOnly` for the mode.
    public var listedModelsOnly: Bool?

    public init() {}

    /// A team's members must not reach a provider's unlisted (perhaps costly) models, and the list is
    /// the server's offer to admins too; local mode's one user owns the provider key, and may name any
    /// model it has.
    public static func defaultListedModelsOnly(_ mode: AccountSettings.Mode) -> Bool {
        mode == .team
    }

    /// Whether only listed models may be used in `mode`.
    public func listedModelsOnly(in mode: AccountSettings.Mode) -> Bool {
        listedModelsOnly ?? Self.defaultListedModelsOnly(mode)
    }

    /// A team shares the providers, so a member gets a human's pace; local mode's one user is only
    /// guarded against a runaway script.
    public static func defaultMessagesPerMinute(_ mode: AccountSettings.Mode) -> Int {
        mode == .team ? 20 : 600
    }

    /// The messages-per-minute rate in force in `mode`.
    public func messagesPerMinute(in mode: AccountSettings.Mode) -> Int {
        messagesPerMinute ?? Self.defaultMessagesPerMinute(mode)
    }
}
