import ParleyGeneration
import ParleyOutcome
import ParleyPrimitives
import ParleyRedis
import ParleyStore

/// A reply's event as the fields of its Redis stream entry, and back. The entry's id carries the event
/// id (`N-0`; a provisional `tail_html` is `N-k`, after the logged event `N` it follows). Text payloads,
/// the hot path, are raw bytes (`k` the kind, `t` the text, `i` a number); the rare structured ones
/// (snapshot, tool calls, surfaces, `done`) are one JSON field `j` in the API's own shapes.
/// Decoding never trusts the entry: a field missing or malformed gives nil (the entry is skipped).
package enum ReplyEventCodec {
    package static func fields(_ payload: GenerationEvent.Payload) -> [RedisStreamEntry.Field] {
        switch payload {
        case .block(let index, let html): [kind("block"), .init("i", String(index)), .init("t", html)]
        case .tail(let text): [kind("tail"), .init("t", text)]
        case .tailAppend(let text): [kind("tail_append"), .init("t", text)]
        case .tailHTML(let html, let keep):
            [kind("tail_html"), .init("i", String(keep))] + (html.map { [.init("t", $0)] } ?? [])
        case .delta(let text): [kind("delta"), .init("t", text)]
        case .reasoning(let text): [kind("reasoning"), .init("t", text)]
        case .error(let code, let message): [kind("error"), .init("c", code.rawValue), .init("t", message)]
        case .toolCallDelta(let id, let delta): [kind("tool_call_delta"), .init("c", id), .init("t", delta)]
        case .snapshot(let snapshot): [kind("snapshot"), json(snapshotJSON(snapshot))]
        case .toolCall(let call): [kind("tool_call"), json(MessagePart.toolCall(call).json)]
        case .toolResult(let call): [kind("tool_result"), json(MessagePart.toolCall(call).json)]
        case .surface(let surfaceID, let message): [kind("surface"), .init("c", surfaceID), json(message)]
        case .logprobs(let items): [kind("logprobs"), json(.array(items))]
        case .done(let outcome): [kind("done"), json(outcomeJSON(outcome))]
        }
    }

    /// The event of an entry; nil when the entry is not one this version wrote.
    package static func event(_ entry: RedisStreamEntry) -> GenerationEvent? {
        guard entry.id.milliseconds > 0, entry.id.milliseconds <= UInt64(Int64.max),
              let kind = entry.value("k").map({ String(decoding: $0, as: UTF8.self) }) else { return nil }
        let id = Int64(entry.id.milliseconds)
        let text = entry.value("t").map { String(decoding: $0, as: UTF8.self) }
        let code = entry.value("c").map { String(decoding: $0, as: UTF8.self) }
        let number = entry.value("i").flatMap { Int(String(decoding: $0, as: UTF8.self)) }
        let json = entry.value("j").flatMap { JSON(parsing: $0) }
        let payload: GenerationEvent.Payload?
        switch kind {
        case "block": payload = number.flatMap { index in text.map { .block(index: index, html: $0) } }
        case "tail": payload = text.map { .tail($0) }
        case "tail_append": payload = text.map { .tailAppend($0) }
        case "tail_html": payload = number.map { .tailHTML(text, keep: $0) }
        case "delta": payload = text.map { .delta($0) }
        case "reasoning": payload = text.map { .reasoning($0) }
        case "error": payload = code.flatMap { code in text.map { .error(code: ReplyErrorCode(rawValue: code), message: $0) } }
        case "tool_call_delta": payload = code.flatMap { id in text.map { .toolCallDelta(id: id, argumentsDelta: $0) } }
        case "snapshot": payload = json.flatMap(snapshot).map { .snapshot($0) }
        case "tool_call": payload = json.flatMap(toolCall).map { .toolCall($0) }
        case "tool_result": payload = json.flatMap(toolCall).map { .toolResult($0) }
        case "surface": payload = code.flatMap { id in json.map { .surface(surfaceID: id, message: $0) } }
        case "logprobs": payload = json?.arrayValue.map { .logprobs($0) }
        case "done": payload = json.flatMap(outcome).map { .done($0) }
        default: payload = nil
        }
        // A provisional `tail_html` sits between logged events (`N-k`); everything else is `N-0`.
        guard let payload, entry.id.sequence == 0 || kind == "tail_html" else { return nil }
        return GenerationEvent(id: id, payload: payload)
    }

    // MARK: - Fields

    private static func kind(_ name: String) -> RedisStreamEntry.Field { .init("k", name) }
    private static func json(_ value: JSON) -> RedisStreamEntry.Field { .init("j", value.text) }

    // MARK: - Snapshot

    static func snapshotJSON(_ snapshot: GenerationSnapshot) -> JSON {
        .object([
            "message_id": .string(snapshot.messageID), "status": .string(snapshot.status.rawValue),
            "blocks": .array(snapshot.blocks.map(JSON.string)), "tail": .string(snapshot.tail),
            "tail_html": snapshot.tailHTML.map(JSON.string) ?? .null, "content": .string(snapshot.content),
            "reasoning": .string(snapshot.reasoning), "parts": .array(snapshot.parts.map(partJSON)),
        ])
    }

    static func snapshot(_ json: JSON) -> GenerationSnapshot? {
        guard let messageID = json["message_id"]?.stringValue,
              let status = json["status"]?.stringValue.flatMap(MessageStatus.init(rawValue:)),
              let blocks = json["blocks"]?.arrayValue?.compactMap(\.stringValue),
              let tail = json["tail"]?.stringValue, let content = json["content"]?.stringValue,
              let reasoning = json["reasoning"]?.stringValue, let parts = json["parts"]?.arrayValue else { return nil }
        return GenerationSnapshot(messageID: messageID, status: status, blocks: blocks, tail: tail,
                                  tailHTML: json["tail_html"]?.stringValue, content: content, reasoning: reasoning,
                                  parts: parts.compactMap(part))
    }

    private static func partJSON(_ part: SnapshotPart) -> JSON {
        switch part {
        case .text(let text, let first, let count):
            .object(["type": .string("text"), "text": .string(text), "first_block": .integer(Int64(first)),
                     "block_count": .integer(Int64(count))])
        case .reasoning(let text): MessagePart.reasoning(text).json
        case .toolCall(let call): MessagePart.toolCall(call).json
        case .surface(let surface): MessagePart.surface(surface).json
        }
    }

    private static func part(_ json: JSON) -> SnapshotPart? {
        if json["type"]?.stringValue == "text" {
            guard let text = json["text"]?.stringValue, case .integer(let first)? = json["first_block"],
                  case .integer(let count)? = json["block_count"] else { return nil }
            return .text(text, firstBlock: Int(clamping: first), blockCount: Int(clamping: count))
        }
        switch MessagePart(json: json) {
        case .reasoning(let text): return .reasoning(text)
        case .toolCall(let call): return .toolCall(call)
        case .surface(let surface): return .surface(surface)
        default: return nil
        }
    }

    private static func toolCall(_ json: JSON) -> ToolCallPart? {
        MessagePart(json: json)?.toolCall
    }

    // MARK: - Outcome

    static func outcomeJSON(_ outcome: GenerationOutcome) -> JSON {
        var fields: [String: JSON] = [
            "status": .string(outcome.status.rawValue),
            "patch": .array(outcome.patch.map { .object(["index": .integer(Int64($0.index)), "html": .string($0.html)]) }),
            "block_count": .integer(Int64(outcome.blockCount)),
        ]
        if let reason = outcome.finishReason { fields["finish_reason"] = .string(reason.rawValue) }
        if let code = outcome.errorCode { fields["error_code"] = .string(code.rawValue) }
        if let message = outcome.errorMessage { fields["error_message"] = .string(message) }
        if let usage = outcome.usage {
            var counts: [String: JSON] = ["estimated": .bool(usage.estimated)]
            if let input = usage.inputTokens { counts["input_tokens"] = .integer(Int64(input)) }
            if let output = usage.outputTokens { counts["output_tokens"] = .integer(Int64(output)) }
            fields["usage"] = .object(counts)
        }
        return .object(fields)
    }

    static func outcome(_ json: JSON) -> GenerationOutcome? {
        guard let status = json["status"]?.stringValue.flatMap(MessageStatus.init(rawValue:)),
              case .integer(let blockCount)? = json["block_count"], let patches = json["patch"]?.arrayValue else { return nil }
        var patch: [BlockPatch] = []
        for item in patches {
            guard case .integer(let index)? = item["index"], let html = item["html"]?.stringValue else { return nil }
            patch.append(BlockPatch(index: Int(clamping: index), html: html))
        }
        let usage = json["usage"].flatMap { counts -> ReplyTokens? in
            guard counts.objectValue != nil else { return nil }
            func count(_ name: String) -> Int? {
                if case .integer(let value)? = counts[name] { return Int(clamping: value) }
                return nil
            }
            return ReplyTokens(inputTokens: count("input_tokens"), outputTokens: count("output_tokens"),
                               estimated: counts["estimated"]?.boolValue ?? false)
        }
        return GenerationOutcome(status: status, finishReason: json["finish_reason"]?.stringValue.map(FinishReason.init(rawValue:)),
                                 usage: usage, patch: patch, blockCount: Int(clamping: blockCount),
                                 errorCode: json["error_code"]?.stringValue.map(ReplyErrorCode.init(rawValue:)),
                                 errorMessage: json["error_message"]?.stringValue)
    }
}
