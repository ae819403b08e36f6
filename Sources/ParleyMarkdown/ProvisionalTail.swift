/// The provisional HTML of a streaming reply's open tail (issue 18, item 3): what the page shows in
/// place of the raw Markdown while a block is still open, so what streams looks like what it becomes.
///
/// Each frame the tail is rendered alone with cmark-gfm, minus what `TailHoldBack` holds back (an
/// unclosed `**`, `` ` ``, `[`…). It is provisional: it never enters the committed blocks, each one
/// replaces the one before, and `StableMarkdown`'s blocks and invariant are untouched.
///
/// Cost, under the same rules as `StableMarkdown`'s parses (`ReparsePolicy`): an open top-level code
/// fence is never rendered (its lines stream linearly as `tail_append`); a tail up to
/// `policy.smallRegionBytes` is rendered whenever its visible text changed; a longer one only after it
/// grew by `policy.growth` or `policy.interval` passed (so one long block costs a geometric sum, linear);
/// past `maxBytes` there is none and the page shows the raw tail. A commit (the tail's start moved)
/// always renders at once, because the previous HTML holds text that is now a committed block.
///
/// Thread-safety: a value type; one per reply, used from one task.
public struct ProvisionalTail: Sendable {
    /// What a frame sends.
    public enum Change: Sendable, Equatable {
        /// Nothing new to send (same visible text, or throttled).
        case unchanged
        /// The new provisional HTML is the first `keep` UTF-16 code units of the previous one followed
        /// by `suffix` (a growing paragraph or list resends only its end, so the bytes sent stay about
        /// linear); nil: none (an open fence, or past `maxBytes`): show the raw tail.
        case html(suffix: String?, keep: Int)
    }

    /// A tail past this many bytes (UTF-8) is not rendered provisionally.
    public static let defaultMaxBytes = 16 * 1024

    public let policy: ReparsePolicy
    public let maxBytes: Int
    /// The HTML last sent; nil when none is (the raw tail is shown).
    public private(set) var html: String?
    /// The visible source of `html`, to tell when the tail's visible text changed.
    private var source: [UInt8] = []
    private var renderedAt: ContinuousClock.Instant = .now
    /// Bytes handed to cmark by provisional renders so far (the measure of their cost).
    public private(set) var renderedByteCount = 0

    public init(policy: ReparsePolicy = ReparsePolicy(), maxBytes: Int = ProvisionalTail.defaultMaxBytes) {
        self.policy = policy
        self.maxBytes = maxBytes
    }

    /// The change for `markdown`'s tail as it is now; `tailMoved`: blocks were committed since the last call.
    public mutating func update(_ markdown: StableMarkdown, tailMoved: Bool) -> Change {
        let tail = markdown.tailBytes
        guard !markdown.isFinished, !markdown.isInOpenFence, tail.count <= maxBytes else { return set(nil) }
        let visible = tail.prefix(TailHoldBack.visibleCount(tail))
        if html != nil, !tailMoved {
            if visible.elementsEqual(source) { return .unchanged }
            // No render is skipped on a timer: nothing would send the skipped text while a model pauses.
            let elapsed = ContinuousClock.now - renderedAt
            if !policy.shouldParse(size: visible.count, parsedSize: source.count, elapsed: elapsed) {
                return .unchanged
            }
        }
        source = Array(visible)
        renderedAt = .now
        let rendered = markdown.renderProvisional(visible)
        renderedByteCount += rendered.parsed
        return set(rendered.html)
    }

    private mutating func set(_ new: String?) -> Change {
        guard new != html else { return .unchanged }
        defer { html = new }
        if new == nil { source = [] }
        guard let new, let old = html else { return .html(suffix: new, keep: 0) }
        let kept = Self.commonPrefix(Array(old.utf8), Array(new.utf8))
        let suffix = String(decoding: new.utf8.dropFirst(kept.bytes), as: UTF8.self)
        return .html(suffix: suffix, keep: kept.utf16)
    }

    /// The longest common prefix of `a` and `b` that ends on a character boundary, in UTF-8 bytes and
    /// in UTF-16 code units (what a JavaScript string's `slice` counts).
    static func commonPrefix(_ a: [UInt8], _ b: [UInt8]) -> (bytes: Int, utf16: Int) {
        var end = 0
        let limit = min(a.count, b.count)
        while end < limit, a[end] == b[end] { end += 1 }
        // Back to the start of a scalar: a continuation byte (10xxxxxx) never begins one.
        while end > 0, end < b.count, b[end] & 0xC0 == 0x80 { end -= 1 }
        var units = 0
        for byte in b[..<end] where byte & 0xC0 != 0x80 {
            units += byte >= 0xF0 ? 2 : 1
        }
        return (end, units)
    }
}
