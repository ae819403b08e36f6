import Foundation
import ParleyPrimitives

/// A conversation: settings plus a pointer to the leaf of the branch the user is looking at.
public struct Conversation: Sendable, Equatable {
    public let id: String
    /// The user it belongs to (`User.localID` in local mode); every request is scoped by it.
    public let ownerID: String
    public var title: String
    public var model: String?
    public var systemPrompt: String?
    /// Temperature, top_p and max_tokens sent with its replies (migration 7).
    public var settings: GenerationSettings
    /// The last message of the current branch; nil while the conversation is empty.
    public var currentLeafID: String?
    public let createdAt: Date
    /// Moves on every change of settings or messages (not on progress saves or branch switches).
    public var updatedAt: Date
    /// Kept at hand: the list can ask for pinned conversations alone (`?pinned=true`).
    public var pinned: Bool
    /// Put away: hidden from the list and search unless asked for (`?archived=true`).
    public var archived: Bool
    /// Made by an import (migration 11): the page marks it. A fork of it is not.
    public var imported: Bool
    /// The tools its replies may call: tool ids and `<server>/*` (migration 12), checked where a client sets them.
    public var tools: [String]

    public init(
        id: String, ownerID: String = User.localID, title: String, model: String?, systemPrompt: String?,
        currentLeafID: String?, createdAt: Date, updatedAt: Date, settings: GenerationSettings = GenerationSettings(),
        pinned: Bool = false, archived: Bool = false, imported: Bool = false, tools: [String] = []
    ) {
        self.id = id
        self.ownerID = ownerID
        self.title = title
        self.model = model
        self.systemPrompt = systemPrompt
        self.settings = settings
        self.currentLeafID = currentLeafID
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.pinned = pinned
        self.archived = archived
        self.imported = imported
        self.tools = tools
    }

    // MARK: - Row decoding

    /// The column list every conversation query selects, in the order `init(row:)` reads.
    static let columns = "id, title, model, system_prompt, current_leaf_id, created_at, updated_at, owner_id, "
        + "temperature, top_p, max_tokens, pinned, archived, imported, tools"

    init(row: Row) {
        self.init(
            id: row.text(0), ownerID: row.text(7), title: row.text(1), model: row.optionalText(2),
            systemPrompt: row.optionalText(3), currentLeafID: row.optionalText(4),
            createdAt: Date(millisecondsSince1970: row.int64(5)),
            updatedAt: Date(millisecondsSince1970: row.int64(6)),
            settings: GenerationSettings(temperature: row.optionalDouble(8), topP: row.optionalDouble(9),
                                         maxTokens: row.optionalInt64(10).map { Int($0) }),
            pinned: row.int64(11) != 0, archived: row.int64(12) != 0, imported: row.int64(13) != 0,
            tools: Self.tools(storedText: row.text(14)))
    }

    /// The stored JSON array of tool ids ([] for anything else).
    static func tools(storedText text: String) -> [String] {
        (JSON(parsing: text)?.arrayValue ?? []).compactMap(\.stringValue)
    }
}
