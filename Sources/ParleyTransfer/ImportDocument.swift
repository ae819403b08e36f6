import Foundation
import ParleyAPI
import ParleyPrimitives
import ParleyHTTP
import ParleyMarkdown
import ParleyStore
import ParleyOutcome

/// An import file (`POST /api/import`) read and checked field by field before anything is written:
/// a conversation export or an export of all conversations, in the shape `ConversationExport`
/// writes. Every failure is a 400 `invalid_import` whose message names the place
/// (`conversations[0].messages[3].parent_id`) and the fault. The tree itself (duplicate ids,
/// missing parents, cycles) is checked by the store, in the same all-or-nothing import.
struct ImportDocument {
    /// The conversations, with the file's ids (the store gives new ones) and HTML rendered.
    var archives: [ConversationArchive]
    /// Each conversation's attachments (parallel to `archives`); `archives[i].files` is filled once
    /// the files are stored and their ids known.
    var files: [ImportFiles] = []

    /// How deep the format nests (document, conversations, conversation, messages, message, usage or
    /// error is 6; a reply's `surface` part holds A2UI messages from level 9, each up to
    /// PARLEY_SURFACE_MAX_DEPTH's default of 32 deep), with room to spare: anything deeper is not an export,
    /// and is refused before decoding so a hostile file cannot make the decoder recurse thousands of levels.
    static let maxDepth = 48

    init(_ body: [UInt8], rules: FieldRules, renderer: MarkdownRenderer, now: Date) throws(HTTPError) {
        guard !body.isEmpty else { throw Self.invalid("The body is empty: send an export document.") }
        if let depth = JSONDepth.exceeds(Self.maxDepth, in: body) {
            throw Self.invalid("The document nests deeper than \(Self.maxDepth) levels (at byte \(depth)): "
                               + "it is not a Parley export.")
        }
        // The version first: a JSON file of some other program says so, not which of our fields it lacks.
        let header: FileHeader
        do {
            header = try JSONDecoder().decode(FileHeader.self, from: Data(body))
        } catch let error as DecodingError {
            if case .typeMismatch(_, let context) = error, context.codingPath.isEmpty {
                throw Self.invalid(Self.notAnExport)
            }
            throw Self.invalid(Self.describe(error))
        } catch {
            throw Self.invalid("The body is not valid JSON.")
        }
        guard header.hasVersion else { throw Self.invalid(Self.notAnExport) }
        let file: FileDocument
        do {
            file = try JSONDecoder().decode(FileDocument.self, from: Data(body))
        } catch let error as DecodingError {
            throw Self.invalid(Self.describe(error))
        } catch {
            throw Self.invalid("The body is not valid JSON.")
        }
        guard file.version == ConversationExport.version else {
            throw Self.invalid("Not a Parley export: 'parley_export' must be \(ConversationExport.version).")
        }
        var archives: [ConversationArchive] = []
        var attachments: [ImportFiles] = []
        for (index, conversation) in file.conversations.enumerated() {
            let place = file.isSingle ? "" : "conversations[\(index)]."
            archives.append(try Self.archive(conversation, place: place, rules: rules, renderer: renderer, now: now))
            attachments.append(Self.files(conversation, place: place))
        }
        self.archives = archives
        self.files = attachments
    }

    // MARK: - Checking

    private static func files(_ conversation: FileConversation, place: String) -> ImportFiles {
        var files = ImportFiles()
        for (index, entry) in (conversation.files ?? []).enumerated() {
            files.entries.append((place: "\(place)files[\(index)]", entry: entry))
        }
        for (index, message) in conversation.messages.enumerated() {
            guard let ids = message.files, !ids.isEmpty else { continue }
            files.references.append(.init(place: "\(place)messages[\(index)].files", messageID: message.id, fileIDs: ids))
        }
        return files
    }

    private static func archive(
        _ file: FileConversation, place: String, rules: FieldRules, renderer: MarkdownRenderer, now: Date
    ) throws(HTTPError) -> ConversationArchive {
        let title = try field(place + "title") { () throws(HTTPError) in try rules.title(file.title) }
        let systemPrompt = try field(place + "system_prompt") { () throws(HTTPError) in
            try file.systemPrompt.map(rules.systemPrompt)
        }
        let ranges = SettingsFields(maxTokensLimit: rules.limits.maxTokensLimit)
        let settings = GenerationSettings(
            temperature: try field(place + "temperature") { () throws(HTTPError) in try file.temperature.map(ranges.temperature) },
            topP: try field(place + "top_p") { () throws(HTTPError) in try file.topP.map(ranges.topP) },
            maxTokens: try field(place + "max_tokens") { () throws(HTTPError) in try file.maxTokens.map(ranges.maxTokens) })
        var messages: [Message] = []
        for (index, message) in file.messages.enumerated() {
            let at = "\(place)messages[\(index)]."
            guard let role = Role(rawValue: message.role) else {
                throw invalid("\(at)role: must be user, assistant or system, not '\(message.role)'.")
            }
            guard let status = MessageStatus(rawValue: message.status) else {
                throw invalid("\(at)status: '\(message.status)' is not a message status.")
            }
            guard status != .streaming else {
                throw invalid("\(at)status: a message that is 'streaming' cannot be imported (nothing would finish it).")
            }
            let usage = try message.usage.flatMap { (fields) throws(HTTPError) in
                try Self.storedUsage(fields, at + "usage")
            }
            let parts = try message.parts.map { (items) throws(HTTPError) in
                try Self.parts(items, role: role, at: at + "parts", renderer: renderer)
            }
            messages.append(Message(
                id: message.id, conversationID: "", parentID: message.parentID, role: role, content: message.content,
                reasoning: message.reasoning ?? "", status: status, finishReason: message.finishReason.map(FinishReason.init(rawValue:)),
                model: message.model, usage: usage, errorCode: (message.error?.code).map(ReplyErrorCode.init(rawValue:)),
                errorMessage: message.error?.message,
                // Only a reply is Markdown; the file's own `html`, if any, is never read.
                html: role == .assistant ? (parts.map(Self.html) ?? renderer.render(message.content)) : nil,
                createdAt: try date(message.createdAt, at + "created_at", now: now),
                updatedAt: try date(message.updatedAt, at + "updated_at", now: now), parts: parts))
        }
        let conversation = Conversation(
            id: file.id ?? "", title: title, model: file.model, systemPrompt: systemPrompt,
            currentLeafID: file.currentLeafID, createdAt: try date(file.createdAt, place + "created_at", now: now),
            updatedAt: try date(file.updatedAt, place + "updated_at", now: now), settings: settings,
            pinned: file.pinned ?? false, archived: file.archived ?? false,
            tools: try Self.tools(file.tools, at: place + "tools"))
        return ConversationArchive(conversation: conversation, messages: messages)
    }

    /// A conversation's `tools`, bounded like the API's; ids are kept as given (a tool this server lacks is
    /// never offered to a model).
    private static func tools(_ entries: [String]?, at place: String) throws(HTTPError) -> [String] {
        let entries = entries ?? []
        guard entries.count <= ToolRules.maxEntries,
              entries.allSatisfy({ !$0.isEmpty && $0.count <= ToolRules.maxIDLength }) else {
            throw invalid("\(place): at most \(ToolRules.maxEntries) tool ids of 1 to \(ToolRules.maxIDLength) characters.")
        }
        return entries
    }

    private static func html(_ parts: [MessagePart]) -> String {
        parts.compactMap { part -> String? in
            if case .text(_, let html) = part { return html }
            return nil
        }.joined()
    }

    /// A reply's usage as the store keeps it (`ReplyTokens`, what `ReplyUsage` reads back), or nil
    /// when the file gives neither count. A count outside `ReplyTokens.range` is refused, naming it:
    /// a file is not a provider, and a figure it cannot have measured is a fault to report, not clamp.
    private static func storedUsage(_ usage: ReplyUsage.Fields, _ place: String) throws(HTTPError) -> ReplyTokens? {
        guard usage.inputTokens != nil || usage.outputTokens != nil else { return nil }
        for (name, count) in [("input_tokens", usage.inputTokens), ("output_tokens", usage.outputTokens)] {
            if let count, !ReplyTokens.range.contains(count) {
                throw invalid("\(place).\(name): must be an integer from \(ReplyTokens.range.lowerBound) to "
                              + "\(ReplyTokens.range.upperBound) (tokens of one reply), not \(count).")
            }
        }
        return ReplyTokens(inputTokens: usage.inputTokens, outputTokens: usage.outputTokens,
                           estimated: usage.estimated == true)
    }

    /// How far past the import's time a timestamp may be: the clocks of two servers differ, and a
    /// store hands out strictly increasing times, which run ahead of the clock during bursts of writes
    /// (100 conversations made in one millisecond end 100 ms ahead).
    static let clockAllowance: TimeInterval = 300

    /// A timestamp as exports write it, at most `clockAllowance` after `now` (a time far in the
    /// future would push the times of every later message past it: the store keeps them increasing).
    private static func date(_ text: String, _ place: String, now: Date) throws(HTTPError) -> Date {
        guard let date = Timestamp.parse(text) else {
            throw invalid("\(place): '\(text)' is not a time like 2026-11-29T14:20:00.123Z.")
        }
        guard date <= now.addingTimeInterval(clockAllowance) else {
            throw invalid("\(place): '\(text)' is in the future.")
        }
        return date
    }

    /// Runs a field rule, naming the place in its error.
    private static func field<T>(_ place: String, _ check: () throws(HTTPError) -> T) throws(HTTPError) -> T {
        do {
            return try check()
        } catch {
            throw invalid("\(place): \(error.message)")
        }
    }

    /// The answer to JSON that is not a Parley export at all: no `parley_export` field, or not an object.
    static let notAnExport = "This isn't a Parley export: a Parley export is a JSON object with \"parley_export\": 1 "
        + "(made by Export or Export all)."

    static func invalid(_ message: String) -> HTTPError {
        HTTPError(status: 400, code: "invalid_import", message: message)
    }

    /// A decoding error as `place: fault`, the place written as in the document.
    private static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [CodingKey]) -> String {
            var text = ""
            for key in keys {
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
                }
            }
            return text.isEmpty ? "the document" : text
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)): must be \(Self.name(of: type))."
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)): must be \(Self.name(of: type)), not null."
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])): is missing."
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "The body is not valid JSON."
                : "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "The document is not a Parley export."
        }
    }

    private static func name(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type: "an integer"
        case is Double.Type: "a number"
        case is [Any].Type: "an array"
        default: "an object"
        }
    }
}

// MARK: - The file's shape

/// Whether the top level names its format at all (`parley_export` present and not null).
private struct FileHeader: Decodable {
    let hasVersion: Bool

    enum CodingKeys: String, CodingKey {
        case version = "parley_export"
    }

    init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        hasVersion = try container.contains(.version) && !container.decodeNil(forKey: .version)
    }
}

/// The top level: `{"parley_export": 1, "conversations": [...]}` or one conversation with
/// `"parley_export": 1` among its fields.
private struct FileDocument: Decodable {
    let version: Int?
    let conversations: [FileConversation]
    let isSingle: Bool

    enum CodingKeys: String, CodingKey {
        case version = "parley_export"
        case conversations
    }

    init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decodeIfPresent(Int.self, forKey: .version)
        if container.contains(.conversations) {
            conversations = try container.decode([FileConversation].self, forKey: .conversations)
            isSingle = false
        } else {
            conversations = [try FileConversation(from: decoder)]
            isSingle = true
        }
    }
}

private struct FileConversation: Decodable {
    let id: String?
    let title: String
    let model: String?
    let systemPrompt: String?
    let temperature: Double?
    let topP: Double?
    let maxTokens: Int?
    let pinned: Bool?
    let archived: Bool?
    let currentLeafID: String?
    let createdAt: String
    let updatedAt: String
    let messages: [FileMessage]
    let tools: [String]?
    /// The attachments its user messages show (issue 21); absent in older exports.
    let files: [ImportFiles.Entry]?

    enum CodingKeys: String, CodingKey {
        case id, title, model, pinned, archived, messages, temperature, tools, files
        case topP = "top_p"
        case maxTokens = "max_tokens"
        case systemPrompt = "system_prompt"
        case currentLeafID = "current_leaf_id"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}

private struct FileMessage: Decodable {
    struct Failure: Decodable {
        let code: String
        let message: String
    }

    let id: String
    let parentID: String?
    let role: String
    let content: String
    let reasoning: String?
    let status: String
    let finishReason: String?
    let model: String?
    let usage: ReplyUsage.Fields?
    let error: Failure?
    let createdAt: String
    let updatedAt: String
    /// A reply's parts (issue 20); absent: the parts its text gives.
    let parts: [JSON]?
    /// Ids of entries in the conversation's `files`, in order.
    let files: [String]?

    enum CodingKeys: String, CodingKey {
        case id, role, content, reasoning, status, model, usage, error, parts, files
        case parentID = "parent_id"
        case finishReason = "finish_reason"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}
