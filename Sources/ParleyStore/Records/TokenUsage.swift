/// Tokens used by reply runs, added up (one reply, one conversation, a day and model, a user).
/// `estimatedReplies` counts the runs whose provider reported no usage: their tokens are the
/// UTF-8 bytes / 4 estimate (see migration 7's `usage_on_finish`).
public struct TokenUsage: Sendable, Equatable {
    public var inputTokens: Int
    public var outputTokens: Int
    /// Reply runs counted (a continue is a run of its own).
    public var replies: Int
    public var estimatedReplies: Int

    public init(inputTokens: Int = 0, outputTokens: Int = 0, replies: Int = 0, estimatedReplies: Int = 0) {
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
        self.replies = replies
        self.estimatedReplies = estimatedReplies
    }

    /// Field by field, saturating: a total that would pass `Int.max` stays there (a report of
    /// absurd figures is wrong, but it must not trap the server nor wrap round to a negative total).
    public static func + (left: TokenUsage, right: TokenUsage) -> TokenUsage {
        TokenUsage(inputTokens: saturatingSum(left.inputTokens, right.inputTokens),
                   outputTokens: saturatingSum(left.outputTokens, right.outputTokens),
                   replies: saturatingSum(left.replies, right.replies),
                   estimatedReplies: saturatingSum(left.estimatedReplies, right.estimatedReplies))
    }

    /// `left + right`, or `Int.max` (`Int.min`) where that overflows.
    public static func saturatingSum(_ left: Int, _ right: Int) -> Int {
        let (sum, overflow) = left.addingReportingOverflow(right)
        guard overflow else { return sum }
        return right > 0 ? .max : .min
    }
}

/// One row of a user's usage report: a UTC day (days since 1970) and a model id ('' for none).
public struct DailyUsage: Sendable, Equatable {
    public let day: Int64
    public let model: String
    public let usage: TokenUsage

    public init(day: Int64, model: String, usage: TokenUsage) {
        self.day = day
        self.model = model
        self.usage = usage
    }
}
