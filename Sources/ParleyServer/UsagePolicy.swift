/// What each user may use, beyond the live-reply caps of `GenerationLimits`: messages per minute,
/// output tokens per UTC day, and (for members) which models. Read from PARLEY_USER_* and
/// PARLEY_MEMBER_MODELS.
public struct UsagePolicy: Sendable, Equatable {
    /// PARLEY_USER_MESSAGES_PER_MINUTE; nil: `defaultMessagesPerMinute` for the mode.
    public var messagesPerMinute: Int?
    /// PARLEY_USER_DAILY_OUTPUT_TOKENS; 0: no daily budget.
    public var dailyOutputTokens = 0
    /// PARLEY_MEMBER_MODELS: the models members may use (ids as `GET /api/models` lists them, or a
    /// bare model name for that name at any provider); nil: every model. Admins may use every model.
    public var memberModels: [String]?

    public init() {}

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
