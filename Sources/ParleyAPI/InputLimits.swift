/// Limits on what a client may store in a conversation's settings. Each is a setting
/// (`PARLEY_MAX_TITLE_CHARS`, `PARLEY_MAX_SYSTEM_PROMPT_BYTES`, `PARLEY_MAX_SEARCH_QUERY_CHARS`, `PARLEY_SEARCH_CANDIDATES`), checked where the value is set
/// (create and PATCH) with a 400 naming the field. A message's `content` needs no limit of its
/// own: the request body limit (`PARLEY_MAX_BODY_BYTES`) bounds it.
public struct InputLimits: Sendable {
    /// Longest title, in Unicode code points (not grapheme clusters: one cluster can carry any number
    /// of combining marks, so only code points bound the bytes). A list page holds up to 200 titles.
    public var maxTitleCharacters = 200
    /// Largest system prompt in UTF-8 bytes; it is sent upstream with every reply of the conversation.
    public var maxSystemPromptBytes = 64 << 10
    /// Highest `max_tokens` a conversation or an OpenAI-style call may ask for (`PARLEY_MAX_TOKENS_LIMIT`).
    public var maxTokensLimit = 32_768
    /// Most days one `GET /api/usage` may cover (`PARLEY_USAGE_MAX_DAYS`): rows are days × models.
    public var maxUsageDays = 366
    /// Longest search query (`GET /api/conversations?q=`), in code points: every term of a query is
    /// looked up in the index, so its length bounds a search's work.
    public var maxSearchQueryCharacters = 256
    /// Matches (messages and titles) a search ranks by relevance (`Store.search`); a query matching more is
    /// answered newest first: bounds the work of a query that matches much of the history.
    public var searchCandidates = 1000

    public init() {}
}
