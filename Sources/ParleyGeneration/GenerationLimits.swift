import ParleyA2UI

/// The limits every generation runs under. Each is configurable (see `ParleyConfiguration`) and tested.
public struct GenerationLimits: Sendable {
    /// Gather chunks arriving faster than this and send them as one frame; 0 sends every chunk at
    /// once. Bounds both the added latency and the write rate, however fast the model is.
    public var frameInterval: Duration
    /// Streamed text is written to SQLite at least this often (one transaction for all generations).
    public var flushInterval: Duration
    /// One run of a reply (the first, or one `continue`) is cut after this many UTF-8 bytes and
    /// marked `length`.
    public var maxReplyBytes: Int
    /// Live generations allowed at once, over all users (429 past it).
    public var maxConcurrent: Int
    /// Live generations allowed at once for one user (429 past it).
    public var maxConcurrentPerUser: Int
    /// Characters of conversation history sent upstream; the oldest turns are dropped first.
    public var contextBudgetCharacters: Int
    /// How long a finished generation stays in memory so reconnecting clients get an exact replay.
    public var retainFinished: Duration
    /// Rounds of tool calls one reply may make (`PARLEY_MAX_TOOL_ROUNDS`); a model that asks for more
    /// ends the reply with `finish_reason: tool_rounds`.
    public var maxToolRounds: Int
    /// Bytes of one tool result kept and sent to the model (`PARLEY_MAX_TOOL_RESULT_BYTES`); the rest is
    /// cut, with a marker the model reads.
    public var maxToolResultBytes: Int
    /// Log probability items (one per token, OpenAI's `logprobs.content`) one run of a reply keeps for a
    /// /v1 call that asked for them; later ones are dropped (with a log line), so memory stays bounded.
    public var maxLogprobItems: Int
    /// The bounds on the surfaces `parley/render_ui` draws (`PARLEY_SURFACE_*`).
    public var surfaces = SurfaceLimits()

    /// The default `maxLogprobItems`.
    public static let defaultMaxLogprobItems = 100_000

    public init(frameInterval: Duration = .milliseconds(25), flushInterval: Duration = .milliseconds(200),
                maxReplyBytes: Int = 256 * 1024, maxConcurrent: Int = 64, maxConcurrentPerUser: Int = 4,
                contextBudgetCharacters: Int = 64_000, retainFinished: Duration = .seconds(30),
                maxToolRounds: Int = 8, maxToolResultBytes: Int = 64 * 1024,
                maxLogprobItems: Int = GenerationLimits.defaultMaxLogprobItems) {
        self.frameInterval = frameInterval
        self.flushInterval = flushInterval
        self.maxReplyBytes = maxReplyBytes
        self.maxConcurrent = maxConcurrent
        self.maxConcurrentPerUser = maxConcurrentPerUser
        self.contextBudgetCharacters = contextBudgetCharacters
        self.retainFinished = retainFinished
        self.maxToolRounds = maxToolRounds
        self.maxToolResultBytes = maxToolResultBytes
        self.maxLogprobItems = maxLogprobItems
    }
}
