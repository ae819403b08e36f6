/// Which models are sent images (`PARLEY_VISION_MODELS`): a list of model ids as `GET /api/models`
/// lists them (`openai:gpt-4o`) or patterns where `*` stands for any run of characters (`openai:*`,
/// `anthropic:claude-*`, `*`). An entry without a provider (`gpt-4o`, `llava*`) names that model at any
/// provider, as `PARLEY_MEMBER_MODELS` does. Nothing is listed by default: a model that cannot see
/// would refuse or, worse, ignore an image, so seeing must be declared. The built-in demo model always
/// sees (it describes what it is given). A value type; immutable.
public struct VisionModels: Sendable, Equatable {
    /// The entries as configured, blanks removed.
    public let patterns: [String]

    public init(_ patterns: [String] = []) {
        self.patterns = patterns.map { String($0.trimmingWhitespace) }.filter { !$0.isEmpty }
    }

    /// The comma-separated setting (`openai:gpt-4o, anthropic:*`).
    public init(setting: String) {
        self.init(setting.split(separator: ",").map(String.init))
    }

    /// Whether the model of `modelID` (as `/api/models` lists it: `provider:model`, or `demo`) is sent
    /// images.
    public func canSee(_ modelID: String) -> Bool {
        if modelID == DemoProvider.modelID { return true }
        let name = ModelID.split(modelID).map { String($0.model) }
        return patterns.contains { pattern in
            Self.matches(pattern, modelID)
                || (ModelID.split(pattern) == nil && name.map { Self.matches(pattern, $0) } == true)
        }
    }

    /// Whether `text` matches `pattern` as a whole, `*` matching any run of characters (none included).
    /// Linear in practice: the last `*` seen is the only backtracking point.
    static func matches(_ pattern: String, _ text: String) -> Bool {
        let pattern = Array(pattern.unicodeScalars), text = Array(text.unicodeScalars)
        var p = 0, t = 0
        var star: Int?, resume = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == "*" {
                star = p
                resume = t
                p += 1
            } else if p < pattern.count, pattern[p] == text[t] {
                p += 1
                t += 1
            } else if let star {
                p = star + 1
                resume += 1
                t = resume
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}
