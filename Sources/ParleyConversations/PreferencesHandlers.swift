import Foundation
import ParleyAPI
import ParleyEvents
import ParleyHTTP
import ParleyQuotas
import ParleyStore

/// `GET` and `PATCH /api/preferences`: the caller's own preferences (docs/api.md "Preferences"), never
/// another's: both are scoped by the caller, so no id is taken. A PATCH takes any subset of the four
/// fields and answers the whole object; an unknown field or a bad value is a 400 naming the field,
/// and nothing is changed.
package struct PreferencesHandlers: Sendable {
    let store: Store
    let rules: FieldRules
    let access: ModelAccess
    /// Tells the caller's other tabs that their preferences changed.
    let feed: UserEventFeed

    package init(store: Store, rules: FieldRules, access: ModelAccess, feed: UserEventFeed) {
        self.store = store
        self.rules = rules
        self.access = access
        self.feed = feed
    }

    /// The fields a PATCH may set.
    static let fields: Set<String> = ["theme", "default_model", "default_system_prompt", "send_key"]

    package func show(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        .json(PreferencesResource(try store.preferences(of: caller.userID)))
    }

    package func update(_ request: HTTPRequest, _ caller: Caller) async throws -> HTTPResponse {
        let body = try JSONBody(request)
        if let unknown = body.fields.first(where: { !Self.fields.contains($0) }) {
            throw Self.invalid("'\(unknown)' is not a preference: the fields are theme, default_model, "
                               + "default_system_prompt and send_key.")
        }
        var change = UserPreferences.Change()
        if body.has("theme") {
            change.theme = try Self.choice("theme", try body.string("theme"), UserPreferences.Theme.self)
        }
        if body.has("send_key") {
            change.sendKey = try Self.choice("send_key", try body.string("send_key"), UserPreferences.SendKey.self)
        }
        if body.has("default_model") {
            change.defaultModel = .some(try await model(try body.string("default_model"), for: caller))
        }
        if body.has("default_system_prompt") {
            // Empty (or only white space) is no default prompt, as the page's empty field means.
            let prompt = try body.string("default_system_prompt").map(systemPrompt)
            change.defaultSystemPrompt = .some(prompt.flatMap { $0.contains(where: { !$0.isWhitespace }) ? $0 : nil })
        }
        let preferences = try store.updatePreferences(of: caller.userID, change)
        feed.preferencesChanged(owner: caller.userID)
        return .json(PreferencesResource(preferences))
    }

    /// A model for new conversations: null clears it; otherwise one `FieldRules.model` accepts and the
    /// caller may use (`ModelAccess`), else a 400 naming the field with the reason.
    private func model(_ value: String?, for caller: Caller) async throws -> String? {
        guard let value else { return nil }
        do {
            let model = try await rules.model(value)
            try await access.require(model, for: caller)
            return model
        } catch let error as HTTPError {
            throw Self.invalid("'default_model': \(error.message)")
        } catch {
            throw Self.invalid("'default_model': the model \(value) is not offered by this server; "
                               + "GET /api/models lists yours.")
        }
    }

    /// A system prompt by the rules of a conversation's (`FieldRules.systemPrompt`), its error naming this field.
    private func systemPrompt(_ value: String) throws(HTTPError) -> String {
        do {
            return try rules.systemPrompt(value)
        } catch {
            throw Self.invalid(error.message.replacingOccurrences(of: "'system_prompt'", with: "'default_system_prompt'"))
        }
    }

    /// One of an enum's raw values, or a 400 naming the field and the values allowed (null included:
    /// these fields always have a value).
    private static func choice<T: RawRepresentable & CaseIterable>(
        _ field: String, _ value: String?, _: T.Type
    ) throws(HTTPError) -> T where T.RawValue == String {
        let allowed = T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        guard let value, let choice = T(rawValue: value) else {
            throw invalid("'\(field)' must be one of \(allowed).")
        }
        return choice
    }

    private static func invalid(_ message: String) -> HTTPError {
        HTTPError(status: 400, code: "invalid_request", message: message)
    }
}
