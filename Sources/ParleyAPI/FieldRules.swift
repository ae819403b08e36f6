import ParleyGeneration
import ParleyHTTP
import ParleyProviders

/// The rules for the fields a client sets on a conversation (title, system prompt, model), in one
/// place, so create, PATCH, send and regenerate accept exactly the same values. Each failure is a
/// 400 naming the field.
///
/// U+0000: refused in titles, system prompts and model ids (names and settings, never meant to hold
/// one); message `content` is the user's text and is stored exactly as sent, U+0000 included (the
/// model's text is stored exactly too). Nothing is ever truncated.
package struct FieldRules: Sendable {
    package let limits: InputLimits
    let providers: ProviderRegistry

    package init(limits: InputLimits, providers: ProviderRegistry) {
        self.limits = limits
        self.providers = providers
    }

    /// A title: not blank, at most `maxTitleCharacters` code points, no U+0000. Stored as given.
    package func title(_ value: String) throws(HTTPError) -> String {
        try Self.refuseNUL(value, field: "title")
        guard value.contains(where: { !$0.isWhitespace }) else {
            throw Self.invalid("'title' must contain more than white space.")
        }
        guard value.unicodeScalars.count <= limits.maxTitleCharacters else {
            throw Self.invalid("'title' is longer than \(limits.maxTitleCharacters) characters (PARLEY_MAX_TITLE_CHARS).")
        }
        return value
    }

    /// A system prompt: at most `maxSystemPromptBytes` UTF-8 bytes, no U+0000.
    package func systemPrompt(_ value: String) throws(HTTPError) -> String {
        try Self.refuseNUL(value, field: "system_prompt")
        guard value.utf8.count <= limits.maxSystemPromptBytes else {
            throw Self.invalid("'system_prompt' is larger than \(limits.maxSystemPromptBytes) bytes "
                               + "(PARLEY_MAX_SYSTEM_PROMPT_BYTES).")
        }
        return value
    }

    /// A model id this server offers (see `GET /api/models`); `unknown_model` otherwise, so a
    /// conversation can never be given a model every send would then fail with.
    /// An unprefixed name is known once a provider has listed it, so such a miss asks for the (cached)
    /// list; a prefixed id is decided by its prefix alone and never waits for a model server.
    package func model(_ value: String) async throws -> String {
        try Self.refuseNUL(value, field: "model")
        if providers.resolve(value) == nil {
            guard ModelID.split(value) == nil else { throw GenerationError.unknownModel(value) }
            _ = await providers.models()
            guard providers.resolve(value) != nil else { throw GenerationError.unknownModel(value) }
        }
        return value
    }

    private static func refuseNUL(_ value: String, field: String) throws(HTTPError) {
        // U+0000 is the byte 0 in UTF-8 and appears nowhere else in it.
        guard !value.utf8.contains(0) else {
            throw invalid("'\(field)' must not contain U+0000.")
        }
    }

    private static func invalid(_ message: String) -> HTTPError {
        HTTPError(status: 400, code: "invalid_request", message: message)
    }
}
