import Foundation

/// One reply's token counts as `messages.usage` holds them: `{"input_tokens","output_tokens"}`, with
/// `"estimated":true` when the store estimated them. Every write of a reply's usage goes through this
/// value (a provider's figures, an import's, a copy's), so a count is always in `range`: the totals
/// added from them stay far from overflow, and a provider's `-5` cannot take tokens back.
///
/// The store is the one reader and writer of the column (`init?(stored:)`, `json`): everything above it
/// passes this value (`Message.usage`, a reply's `done`), never the text.
public struct ReplyTokens: Sendable, Equatable, Codable {
    /// The most tokens one reply counts, input or output: a thousand times the longest context of
    /// today's models, yet small enough that totals of billions of replies fit an Int64.
    public static let maximum = 1_000_000_000
    /// The counts an import may give (`invalid_import` outside it); a provider's are clamped into it.
    public static let range = 0...maximum

    public let inputTokens: Int?
    public let outputTokens: Int?
    public let estimated: Bool

    /// Counts outside `range` are clamped into it (a provider reporting -5 used 0, one reporting
    /// 10^12 used `maximum`); nil stays nil (the store estimates a missing count when a run ends).
    public init(inputTokens: Int?, outputTokens: Int?, estimated: Bool = false) {
        self.inputTokens = inputTokens.map(Self.bounded)
        self.outputTokens = outputTokens.map(Self.bounded)
        self.estimated = estimated
    }

    /// The stored text read back, its counts clamped as above (rows written before the bound, or by
    /// hand, may hold anything); a count that is not an integer reads as missing. nil when the text is
    /// absent or not a JSON object.
    init?(stored text: String?) {
        guard let text, let tokens = try? JSONDecoder().decode(ReplyTokens.self, from: Data(text.utf8)) else {
            return nil
        }
        self = tokens
    }

    /// A usage object, each field read on its own: one odd field does not lose the others.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(inputTokens: try? container.decodeIfPresent(Int.self, forKey: .inputTokens),
                  outputTokens: try? container.decodeIfPresent(Int.self, forKey: .outputTokens),
                  estimated: (try? container.decodeIfPresent(Bool.self, forKey: .estimated)) == true)
    }

    /// The counts given, and `estimated` only when true (as `json`).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(inputTokens, forKey: .inputTokens)
        try container.encodeIfPresent(outputTokens, forKey: .outputTokens)
        if estimated { try container.encode(true, forKey: .estimated) }
    }

    /// `count` clamped into `range`.
    public static func bounded(_ count: Int) -> Int {
        min(max(count, range.lowerBound), range.upperBound)
    }

    /// The text written to `messages.usage`: the counts given, and `estimated` only when true.
    var json: String {
        var fields: [String] = []
        if let inputTokens { fields.append("\"input_tokens\":\(inputTokens)") }
        if let outputTokens { fields.append("\"output_tokens\":\(outputTokens)") }
        if estimated { fields.append("\"estimated\":true") }
        return "{" + fields.joined(separator: ",") + "}"
    }

    enum CodingKeys: String, CodingKey {
        case estimated
        case inputTokens = "input_tokens"
        case outputTokens = "output_tokens"
    }
}
