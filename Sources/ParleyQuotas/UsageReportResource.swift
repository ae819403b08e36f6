import ParleyAPI
import ParleyStore

/// `GET /api/usage`: the caller's tokens per UTC day and model, and their total.
struct UsageReportResource: Encodable {
    struct Day: Encodable {
        let day: String
        let model: String
        let usage: TokenUsage

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: DayKeys.self)
            try container.encode(day, forKey: .day)
            try container.encode(model, forKey: .model)
            try container.encode(usage.inputTokens, forKey: .inputTokens)
            try container.encode(usage.outputTokens, forKey: .outputTokens)
            try container.encode(usage.replies, forKey: .replies)
            try container.encode(usage.estimatedReplies, forKey: .estimatedReplies)
        }

        enum DayKeys: String, CodingKey {
            case day, model, replies
            case inputTokens = "input_tokens"
            case outputTokens = "output_tokens"
            case estimatedReplies = "estimated_replies"
        }
    }

    let from: String
    let to: String
    let days: [Day]
    let total: TokenUsageResource
}
