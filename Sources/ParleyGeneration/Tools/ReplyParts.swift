import ParleyMarkdown
import ParleyPrimitives
import ParleyProviders
import ParleyStore

/// The parts of a reply that are closed (text before a tool call, with its final render; reasoning;
/// the tool calls), the calls of the round being streamed, and the rounds so far. The text still
/// streaming is `ReplyText`'s; together they are the reply. A value type, tested without a server.
///
/// Block indices count across the whole reply: the closed text parts' blocks come first, in order
/// (`closedBlocks`), and the streaming text's block `i` is block `closedBlocks.count + i`.
struct ReplyParts: Sendable {
    private(set) var closed: [MessagePart] = []
    private(set) var closedBlocks: [String] = []
    /// The first block of each closed text part, by its position in `closed`.
    private var firstBlocks: [Int: Int] = [:]
    /// The current round's calls by the provider's index, as positions in `closed`.
    private var open: [Int: Int] = [:]
    /// Rounds of tool calls made so far (a round is one model answer that called tools).
    private(set) var round = 0
    private var callCount = 0
    /// Bumped on every change, so the group commit knows when the parts are to be written again.
    private(set) var version = 0

    /// - Parameter parts: a continued or resumed reply's parts before its trailing text (`split`).
    init(closed parts: [MessagePart] = [], renderer: MarkdownRenderer) {
        for part in parts {
            switch part {
            case .text(let text, _):
                closeText(text, blocks: renderer.renderBlocks(text))
            case .reasoning, .toolCall, .surface, .action:
                closed.append(part)
            }
            if let call = part.toolCall {
                callCount += 1
                round = max(round, call.round + 1)
            }
        }
        // A reply paused in a round resumes in it: the round counter moves on when its calls are done.
        if pendingCalls.isEmpty == false { round -= 1 }
    }

    /// Splits stored parts into the closed ones and the trailing text and reasoning (after the last tool call).
    static func split(_ parts: [MessagePart]) -> (closed: [MessagePart], text: String, reasoning: String) {
        guard let last = parts.lastIndex(where: { $0.toolCall != nil || $0.surface != nil }) else {
            return ([], joined(parts.compactMap(\.answerText)), joined(parts.compactMap(\.reasoningText)))
        }
        let trailing = parts[(last + 1)...]
        return (Array(parts[...last]), joined(trailing.compactMap(\.answerText)),
                joined(trailing.compactMap(\.reasoningText)))
    }

    static func joined(_ texts: [String]) -> String {
        texts.filter { !$0.isEmpty }.joined(separator: "\n\n")
    }

    var hasToolCalls: Bool { callCount > 0 }

    // MARK: - Text

    /// Closes the streaming text: its reasoning and text become parts (when not empty), its final
    /// blocks are appended to `closedBlocks`.
    mutating func closeSegment(text: String, reasoning: String, blocks: [String]) {
        if !reasoning.isEmpty { closed.append(.reasoning(reasoning)) }
        if !text.isEmpty { closeText(text, blocks: blocks) }
        version += 1
    }

    private mutating func closeText(_ text: String, blocks: [String]) {
        firstBlocks[closed.count] = closedBlocks.count
        closed.append(.text(text, html: blocks.joined()))
        closedBlocks += blocks
    }

    // MARK: - Calls

    /// Whether the provider's call `index` of this round has begun.
    func hasCall(index: Int) -> Bool { open[index] != nil }

    /// Begins the provider's call `index`: a new `streaming` part with the next call id.
    mutating func beginCall(index: Int, providerID: String, name: String, tool: String) -> ToolCallPart {
        callCount += 1
        let call = ToolCallPart(id: "call_\(callCount)", providerID: providerID, tool: tool, name: name,
                                status: .streaming, round: round)
        open[index] = closed.count
        closed.append(.toolCall(call))
        version += 1
        return call
    }

    /// The provider's call `index` of this round, nil when it has not begun.
    func openCall(index: Int) -> ToolCallPart? {
        open[index].flatMap { closed[$0].toolCall }
    }

    /// Appends a fragment of call `index`'s arguments; returns the call's id (nil for an unknown index).
    mutating func appendArguments(index: Int, _ fragment: String) -> String? {
        guard let position = open[index], var call = closed[position].toolCall else { return nil }
        call.argumentsText += fragment
        closed[position] = .toolCall(call)
        version += 1
        return call.id
    }

    /// Adds a valid A2UI message to this reply's part for its surface (a new part, after the parts so far,
    /// for a surface this reply has not touched yet).
    mutating func appendSurface(_ surfaceID: String, message: JSON) {
        if let position = closed.lastIndex(where: { $0.surface?.surfaceID == surfaceID }),
           var surface = closed[position].surface {
            surface.messages.append(message)
            closed[position] = .surface(surface)
        } else {
            closed.append(.surface(SurfacePart(surfaceID: surfaceID, messages: [message])))
        }
        version += 1
    }

    /// The A2UI messages of this reply's surface parts, in order.
    var surfaceMessages: [JSON] { closed.compactMap(\.surface).flatMap(\.messages) }

    /// The calls of the current round, in call order.
    var roundCalls: [ToolCallPart] {
        closed.compactMap(\.toolCall).filter { $0.round == round }
    }

    /// Calls approved (or needing no approval) and not yet run: what a resumed reply runs first.
    var pendingCalls: [ToolCallPart] {
        closed.compactMap(\.toolCall).filter { $0.status == .awaitingApproval && $0.decision == .approve }
    }

    /// Replaces the call with the same id.
    mutating func update(_ call: ToolCallPart) {
        guard let position = closed.firstIndex(where: { $0.toolCall?.id == call.id }) else { return }
        closed[position] = .toolCall(call)
        version += 1
    }

    /// The round's calls are done: the next model answer is a new round.
    mutating func endRound() {
        round += 1
        open = [:]
    }

    /// Every call not final yet becomes `cancelled` (the reply ends without them: a stop, a failure,
    /// shutdown); returns them. Calls awaiting approval stay, unless `includingAwaiting`.
    mutating func cancelOpenCalls(includingAwaiting: Bool) -> [ToolCallPart] {
        var cancelled: [ToolCallPart] = []
        for case .toolCall(var call) in closed where !call.status.isFinal {
            guard includingAwaiting || call.status != .awaitingApproval else { continue }
            call.status = .cancelled
            update(call)
            cancelled.append(call)
        }
        return cancelled
    }

    // MARK: - The whole reply

    /// Every part, with the streaming text and reasoning last (left out when empty, unless the reply has no other part).
    func all(text: String, reasoning: String, html: String?) -> [MessagePart] {
        var parts = closed
        if !reasoning.isEmpty { parts.append(.reasoning(reasoning)) }
        if !text.isEmpty || parts.isEmpty { parts.append(.text(text, html: html)) }
        return parts
    }

    /// The reply's text: the text parts joined, the streaming one last.
    func content(text: String) -> String {
        Self.joined(closed.compactMap(\.answerText) + [text])
    }

    func reasoning(_ current: String) -> String {
        Self.joined(closed.compactMap(\.reasoningText) + [current])
    }

    /// The parts for a snapshot: closed text parts with their blocks, the streaming text after them.
    func snapshot(text: String, reasoning: String, liveBlocks: Int) -> [SnapshotPart] {
        var parts: [SnapshotPart] = []
        for (position, part) in closed.enumerated() {
            switch part {
            case .text(let text, _):
                let first = firstBlocks[position] ?? 0
                let next = firstBlocks.filter { $0.key > position }.map(\.value).min() ?? closedBlocks.count
                parts.append(.text(text, firstBlock: first, blockCount: next - first))
            case .reasoning(let text): parts.append(.reasoning(text))
            case .toolCall(let call): parts.append(.toolCall(call))
            case .surface(let surface): parts.append(.surface(surface))
            case .action: break
            }
        }
        if !reasoning.isEmpty { parts.append(.reasoning(reasoning)) }
        if !text.isEmpty || liveBlocks > 0 || parts.isEmpty {
            parts.append(.text(text, firstBlock: closedBlocks.count, blockCount: liveBlocks))
        }
        return parts
    }
}

extension MessagePart {
    /// The text of a reasoning part, nil for the others.
    var reasoningText: String? {
        if case .reasoning(let text) = self { return text }
        return nil
    }
}
