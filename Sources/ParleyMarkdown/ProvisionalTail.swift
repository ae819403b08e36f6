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
/// On top, a budget: all provisional renders together cost at most `budget` times the bytes streamed
/// so far (after `startingBudget`, each render counted as its bytes and `renderOverheadBytes`). Rendering a growing paragraph on every 12-byte piece parsed about 20× the reply (one render
/// of its whole open paragraph per piece); past the budget an update is owed instead (`isOwed`), and
/// rendered by the next update once the budget allows, once `maxLag` has passed since the last render,
/// or by `renderOwed` from the reply's frame timer (so a model that pauses leaves nothing unshown for
/// longer than `maxLag`). A fast stream's long paragraph is then shown in steps of a few words.
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
    /// Bytes the provisional renders may parse per byte streamed (`make bench` keeps the whole stream,
    /// provisional renders included, within 10× one full render for prose).
    public static let defaultBudget = 3.0
    /// The longest a visible change waits for its render while over the budget.
    public static let defaultMaxLag = Duration.milliseconds(50)
    /// What one render costs beyond the bytes it parses, counted against the budget as bytes: a
    /// parser with its extensions, and the HTML of each block (about 4 µs, the parse of some 300
    /// bytes, on the development machine). Without it a render per 12-byte piece stayed within the
    /// byte budget and still cost 14× one full render of a prose reply.
    public static let renderOverheadBytes = 256
    /// Budget every reply starts with, so a short reply (most are) renders on every change.
    public static let defaultStartingBudget = 4096

    public let policy: ReparsePolicy
    public let maxBytes: Int
    public let budget: Double
    public let startingBudget: Int
    public let maxLag: Duration
    /// A change of the visible tail is not rendered yet (over the budget, or a long tail waiting for
    /// `policy`'s growth): `renderOwed` renders it once `owedLag` has passed.
    public private(set) var isOwed = false
    /// How long an owed render may wait: `maxLag` over the budget, `policy.interval` for a long tail.
    public private(set) var owedLag = Duration.zero
    /// The HTML last sent; nil when none is (the raw tail is shown).
    public private(set) var html: String?
    /// The visible source of `html`, to tell when the tail's visible text changed.
    private var source: [UInt8] = []
    private var renderedAt: ContinuousClock.Instant = .now
    /// Bytes handed to cmark by provisional renders so far (the measure of their cost).
    public private(set) var renderedByteCount = 0
    /// What the renders so far cost against the budget: their bytes and `renderOverheadBytes` each.
    private var spent = 0

    public init(policy: ReparsePolicy = ReparsePolicy(), maxBytes: Int = ProvisionalTail.defaultMaxBytes,
                budget: Double = ProvisionalTail.defaultBudget,
                startingBudget: Int = ProvisionalTail.defaultStartingBudget,
                maxLag: Duration = ProvisionalTail.defaultMaxLag) {
        self.policy = policy
        self.maxBytes = maxBytes
        self.budget = budget
        self.startingBudget = startingBudget
        self.maxLag = maxLag
    }

    /// The change for `markdown`'s tail as it is now; `tailMoved`: blocks were committed since the last call.
    public mutating func update(_ markdown: StableMarkdown, tailMoved: Bool) -> Change {
        guard let tail = renderable(markdown) else { return set(nil) }
        if html != nil, !tailMoved {
            // The throttles look at sizes only (what is held back only shortens the tail), so an update
            // they hold back costs no scan of the tail: on a fast stream most updates are held back.
            let elapsed = ContinuousClock.now - renderedAt
            if !policy.shouldParse(size: tail.count, parsedSize: source.count, elapsed: elapsed) {
                owe(policy.interval)
                return .unchanged
            }
            let allowance = startingBudget + Int(budget * Double(markdown.byteCount)) - spent
            if tail.count + Self.renderOverheadBytes > allowance, elapsed < maxLag {
                owe(maxLag)
                return .unchanged
            }
        }
        let visible = tail.prefix(TailHoldBack.visibleCount(tail))
        if html != nil, !tailMoved, visible.elementsEqual(source) {
            isOwed = false
            return .unchanged
        }
        return render(markdown, visible)
    }

    /// Renders the change a throttle held back (`isOwed`); `.unchanged` when none is owed. Called by
    /// the reply's timer `owedLag` after an owed update, so a pause never leaves text unshown.
    public mutating func renderOwed(_ markdown: StableMarkdown) -> Change {
        guard isOwed else { return .unchanged }
        guard let tail = renderable(markdown) else { return set(nil) }
        let visible = tail.prefix(TailHoldBack.visibleCount(tail))
        guard !visible.elementsEqual(source) else {
            isOwed = false
            return .unchanged
        }
        return render(markdown, visible)
    }

    /// The tail when it may be rendered provisionally; nil when there is none to show (finished, an
    /// open top-level fence, which streams as code, or past `maxBytes`).
    private func renderable(_ markdown: StableMarkdown) -> ArraySlice<UInt8>? {
        let tail = markdown.tailBytes
        guard !markdown.isFinished, !markdown.isInOpenFence, tail.count <= maxBytes else { return nil }
        return tail
    }

    private mutating func owe(_ lag: Duration) {
        owedLag = isOwed ? min(owedLag, lag) : lag
        isOwed = true
    }

    private mutating func render(_ markdown: StableMarkdown, _ visible: ArraySlice<UInt8>) -> Change {
        isOwed = false
        source = Array(visible)
        renderedAt = .now
        let rendered = markdown.renderProvisional(visible)
        renderedByteCount += rendered.parsed
        spent += rendered.parsed + Self.renderOverheadBytes
        return set(rendered.html)
    }

    private mutating func set(_ new: String?) -> Change {
        if new == nil { isOwed = false }
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
