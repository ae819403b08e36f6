import ParleyMarkdown
import ParleyPrimitives
import ParleyProviders
import ParleyStore

/// How `/v1`'s tool calls map onto Parley's replies, both ways. Parley never runs these tools: the
/// client does, and brings the results back in its next request.
///
/// In: an assistant turn with `tool_calls` is stored as one assistant message whose parts are its text,
/// then one `ToolCallPart` per call (`complete`, the client's id as `providerID`, the function name as
/// `name` and `tool`, `result` the matching `role: tool` message's content); an assistant turn that
/// follows the results (the model's next round) joins the same message, as a reply's rounds do.
/// Out: a response is the parts its reply gained in this call (after the calls the request answered):
/// their text, and their calls under the ids the client will answer (`clientID`).
enum OpenAIToolHistory {
    /// The request's turns as stored: user turns as given, consecutive assistant turns (rounds of one
    /// reply joined by tool results) as one message with parts.
    static func transcript(_ turns: [OpenAIChatRequest.Turn], renderer: MarkdownRenderer) -> [TranscriptTurn] {
        var stored: [TranscriptTurn] = []
        var reply: [MessagePart] = []
        var round = 0
        func closeReply() {
            guard !reply.isEmpty else { return }
            let texts = reply.compactMap(\.answerText)
            let html = reply.compactMap { part -> String? in
                if case .text(_, let html) = part { return html }
                return nil
            }.joined()
            let hasCalls = reply.contains { $0.toolCall != nil }
            stored.append(TranscriptTurn(role: .assistant, content: texts.filter { !$0.isEmpty }.joined(separator: "\n\n"),
                                         html: html, parts: hasCalls ? reply : nil))
            reply = []
            round = 0
        }
        for turn in turns {
            guard turn.role == .assistant else {
                closeReply()
                stored.append(TranscriptTurn(role: turn.role, content: turn.content, html: nil))
                continue
            }
            if !turn.content.isEmpty || turn.toolCalls.isEmpty {
                reply.append(.text(turn.content, html: renderer.render(turn.content)))
            }
            let first = reply.compactMap(\.toolCall).count
            for (offset, call) in turn.toolCalls.enumerated() {
                let result = turn.toolResults.first { $0.toolCallID == call.id }
                reply.append(.toolCall(part(for: call, id: "call_\(first + offset + 1)", round: round,
                                            result: result?.content)))
            }
            if turn.toolCalls.isEmpty { closeReply() } else { round += 1 }
        }
        closeReply()
        return stored
    }

    /// A client's call as a reply part: complete, its result (when the request gives it) as text.
    static func part(for call: ChatToolCall, id: String, round: Int, result: String?) -> ToolCallPart {
        // `arguments` holds a JSON object only, as for the model's own calls; the text is kept as written.
        var arguments: JSON?
        if case .object(let fields)? = JSON(parsing: call.arguments) { arguments = .object(fields) }
        return ToolCallPart(id: id, providerID: call.id, tool: call.name, name: call.name,
                            argumentsText: call.arguments, arguments: arguments, status: .complete,
                            result: result.map { .text($0, isError: false) }, round: round)
    }

    /// The id the client knows a call by: the provider's, or Parley's when the provider gave none.
    static func clientID(_ call: ToolCallPart) -> String {
        call.providerID.isEmpty ? call.id : call.providerID
    }

    /// The request's last turn's results as results of `leaf`'s calls (by Parley call id), for a
    /// conversation that continues from its stored reply: every result must name one of its calls.
    static func results(of turn: OpenAIChatRequest.Turn, for leaf: Message?) throws(OpenAIError) -> [String: ToolCallResult] {
        let calls = leaf.map { $0.role == .assistant ? $0.toolCalls : [] } ?? []
        var results: [String: ToolCallResult] = [:]
        for result in turn.toolResults {
            guard let call = calls.first(where: { clientID($0) == result.toolCallID }) else {
                throw OpenAIError.invalid("The 'tool' message for '\(result.toolCallID)' answers no tool call of the "
                                          + "conversation's last reply (X-Parley-Conversation).", param: "messages")
            }
            results[call.id] = .text(result.content, isError: false)
        }
        return results
    }

    /// Where a response's parts begin in its reply: after the last call the reply had when this call
    /// started (0 for a new reply).
    static func responseStart(_ parts: [MessagePart]) -> Int {
        (parts.lastIndex { $0.toolCall != nil } ?? -1) + 1
    }

    /// What a response holds of its reply's parts from `start`: the text, the reasoning, the calls.
    static func response(_ message: Message, from start: Int)
        -> (content: String, reasoning: String, toolCalls: [ChatToolCall]) {
        let parts = message.parts.dropFirst(start)
        func joined(_ texts: [String]) -> String { texts.filter { !$0.isEmpty }.joined(separator: "\n\n") }
        let reasoning = joined(parts.compactMap { part -> String? in
            if case .reasoning(let text) = part { return text }
            return nil
        })
        let calls = parts.compactMap(\.toolCall).map {
            ChatToolCall(id: clientID($0), name: $0.name, arguments: $0.argumentsText)
        }
        return (joined(parts.compactMap(\.answerText)), reasoning, calls)
    }
}
