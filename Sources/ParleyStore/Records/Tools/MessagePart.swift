import ParleyPrimitives

/// One piece of an assistant reply, in the order it happened (the parts model of AI SDK's UIMessage
/// and Anthropic's content blocks): the model's reasoning, its text, and the tools it called. A reply
/// without tools is one text part (and a reasoning part before it when the model gave any), so older
/// rows and clients that read `content` see the same message.
public enum MessagePart: Sendable, Equatable {
    /// Answer text (Markdown); `html` is its own final render, nil while it streams.
    case text(String, html: String?)
    case reasoning(String)
    case toolCall(ToolCallPart)
    /// A2UI messages (issue 22) of one surface that this reply drew or changed, valid and in order
    /// (`{"type":"surface","surface_id","messages":[…]}`); a surface's state is the fold of its parts over the branch.
    case surface(SurfacePart)
    /// A user turn made by a surface's action (`{"type":"action","surface_id","action":{…}}`).
    case action(surfaceID: String, action: JSON)

    /// The text of a text part, nil for the others.
    public var answerText: String? {
        if case .text(let text, _) = self { return text }
        return nil
    }

    /// The part without its HTML (a text part's render is made again where it is needed: exports, a user
    /// message, a reply still streaming); the others as they are.
    public var withoutHTML: MessagePart {
        if case .text(let text, _) = self { return .text(text, html: nil) }
        return self
    }

    /// The tool call of a tool part, nil for the others.
    public var toolCall: ToolCallPart? {
        if case .toolCall(let call) = self { return call }
        return nil
    }

    /// The surface of a surface part, nil for the others.
    public var surface: SurfacePart? {
        if case .surface(let surface) = self { return surface }
        return nil
    }
}

/// One surface's A2UI messages inside one reply (`MessagePart.surface`).
public struct SurfacePart: Sendable, Equatable {
    public var surfaceID: String
    /// Valid A2UI v0.9 messages, in the order they were sent.
    public var messages: [JSON]

    public init(surfaceID: String, messages: [JSON]) {
        self.surfaceID = surfaceID
        self.messages = messages
    }
}

/// A tool call inside a reply. `id` is Parley's (unique within the message: what clients name in an
/// approval); `providerID` is the model's own id, which providers may repeat across rounds. `tool` is the
/// tool's id (`<server>/<tool>`), `name` the function name the provider saw (nil for a name the model
/// made up that maps to no tool).
public struct ToolCallPart: Sendable, Equatable {
    public var id: String
    public var providerID: String
    public var tool: String
    public var name: String
    /// The arguments as the model wrote them (fragments joined), kept even when they are not JSON.
    public var argumentsText: String
    /// The parsed arguments, once complete and valid (a JSON object).
    public var arguments: JSON?
    public var status: ToolCallStatus
    /// The user's decision on a call that asked for one (`approve` or `deny`), nil before it.
    public var decision: ToolDecision?
    public var result: ToolCallResult?
    /// The round of the reply it was made in (0 for the first model answer, 1 after the first results...).
    public var round: Int

    public init(id: String, providerID: String, tool: String, name: String, argumentsText: String = "",
                arguments: JSON? = nil, status: ToolCallStatus, decision: ToolDecision? = nil,
                result: ToolCallResult? = nil, round: Int = 0) {
        self.id = id
        self.providerID = providerID
        self.tool = tool
        self.name = name
        self.argumentsText = argumentsText
        self.arguments = arguments
        self.status = status
        self.decision = decision
        self.result = result
        self.round = round
    }
}

/// Where a tool call is in its life. `streaming`, `awaiting_approval` and `running` are open; the
/// others are final.
public enum ToolCallStatus: String, Sendable, Equatable, CaseIterable {
    /// Its arguments are still arriving.
    case streaming
    case awaitingApproval = "awaiting_approval"
    case running
    case complete
    /// It could not run (arguments not a JSON object, an unknown or unavailable tool, a server error,
    /// a result with `isError`).
    case error
    case denied
    /// A stop, a delete or a crash ended it before its result.
    case cancelled

    /// True for the statuses a call can no longer leave.
    public var isFinal: Bool {
        switch self {
        case .streaming, .awaitingApproval, .running: false
        case .complete, .error, .denied, .cancelled: true
        }
    }
}

/// What a user said to a call that asked for approval.
public enum ToolDecision: String, Sendable, Equatable {
    case approve
    case deny
}

/// A tool's result as the MCP server gave it: its content items (text, image, resource...) kept as
/// JSON, the structured content when there is some, and whether it reports an error.
public struct ToolCallResult: Sendable, Equatable {
    public var content: [JSON]
    public var structuredContent: JSON?
    public var isError: Bool

    public init(content: [JSON], structuredContent: JSON? = nil, isError: Bool) {
        self.content = content
        self.structuredContent = structuredContent
        self.isError = isError
    }

    /// A result made of one text item (an error Parley reports itself, a cut marker...).
    public static func text(_ text: String, isError: Bool) -> ToolCallResult {
        ToolCallResult(content: [.object(["type": .string("text"), "text": .string(text)])], isError: isError)
    }
}
