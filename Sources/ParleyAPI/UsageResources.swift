import Foundation
import ParleyStore

/// Token totals as the API shows them (a conversation's, a day and model's, a user's).
package struct TokenUsageResource: Encodable {
    let usage: TokenUsage

    package init(_ usage: TokenUsage) {
        self.usage = usage
    }

    enum CodingKeys: String, CodingKey {
        case replies
        case inputTokens = "input_tokens"
        case outputTokens = "output_tokens"
        case estimatedReplies = "estimated_replies"
    }

    package func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(usage.inputTokens, forKey: .inputTokens)
        try container.encode(usage.outputTokens, forKey: .outputTokens)
        try container.encode(usage.replies, forKey: .replies)
        try container.encode(usage.estimatedReplies, forKey: .estimatedReplies)
    }
}

/// One reply's stored usage (`messages.usage`): `{"input_tokens","output_tokens","estimated"}`, or null
/// while it streams (or for a turn a client brought rather than one generated here).
package struct ReplyUsage: Encodable, Equatable {
    package let inputTokens: Int?
    package let outputTokens: Int?
    let estimated: Bool

    /// nil when nothing is stored. Counts are within `ReplyTokens.range` (the store clamps a row
    /// stored before the bound as it reads it).
    package init?(_ tokens: ReplyTokens?) {
        guard let tokens else { return nil }
        inputTokens = tokens.inputTokens
        outputTokens = tokens.outputTokens
        estimated = tokens.estimated
    }

    /// A usage object as stored or as an export file gives it: each field may be missing.
    package struct Fields: Decodable {
        package let inputTokens: Int?
        package let outputTokens: Int?
        package let estimated: Bool?

        typealias CodingKeys = ReplyUsage.CodingKeys
    }

    /// The same object as `encode(to:)` writes, as JSON text (for event data written by hand).
    package var json: String {
        let input = inputTokens.map(String.init) ?? "null"
        let output = outputTokens.map(String.init) ?? "null"
        return #"{"input_tokens":\#(input),"output_tokens":\#(output),"estimated":\#(estimated)}"#
    }

    enum CodingKeys: String, CodingKey {
        case estimated
        case inputTokens = "input_tokens"
        case outputTokens = "output_tokens"
    }

    package func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(inputTokens, forKey: .inputTokens)
        try container.encode(outputTokens, forKey: .outputTokens)
        try container.encode(estimated, forKey: .estimated)
    }
}
