import Foundation
import ParleyStore

/// Token totals as the API shows them (a conversation's, a day and model's, a user's).
struct TokenUsageResource: Encodable {
    let usage: TokenUsage

    init(_ usage: TokenUsage) {
        self.usage = usage
    }

    enum CodingKeys: String, CodingKey {
        case replies
        case inputTokens = "input_tokens"
        case outputTokens = "output_tokens"
        case estimatedReplies = "estimated_replies"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(usage.inputTokens, forKey: .inputTokens)
        try container.encode(usage.outputTokens, forKey: .outputTokens)
        try container.encode(usage.replies, forKey: .replies)
        try container.encode(usage.estimatedReplies, forKey: .estimatedReplies)
    }
}

/// One reply's stored usage (`messages.usage`): `{"input_tokens","output_tokens","estimated"}`, or null
/// while it streams (or for a turn a client brought rather than one generated here).
struct ReplyUsage: Encodable, Equatable {
    let inputTokens: Int?
    let outputTokens: Int?
    let estimated: Bool

    /// nil when nothing is stored. Counts are within `ReplyTokens.range` (the store clamps a row
    /// stored before the bound as it reads it).
    init?(_ tokens: ReplyTokens?) {
        guard let tokens else { return nil }
        inputTokens = tokens.inputTokens
        outputTokens = tokens.outputTokens
        estimated = tokens.estimated
    }

    /// A usage object as stored or as an export file gives it: each field may be missing.
    struct Fields: Decodable {
        let inputTokens: Int?
        let outputTokens: Int?
        let estimated: Bool?

        typealias CodingKeys = ReplyUsage.CodingKeys
    }

    /// The same object as `encode(to:)` writes, as JSON text (for event data written by hand).
    var json: String {
        let input = inputTokens.map(String.init) ?? "null"
        let output = outputTokens.map(String.init) ?? "null"
        return #"{"input_tokens":\#(input),"output_tokens":\#(output),"estimated":\#(estimated)}"#
    }

    enum CodingKeys: String, CodingKey {
        case estimated
        case inputTokens = "input_tokens"
        case outputTokens = "output_tokens"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(inputTokens, forKey: .inputTokens)
        try container.encode(outputTokens, forKey: .outputTokens)
        try container.encode(estimated, forKey: .estimated)
    }
}

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
