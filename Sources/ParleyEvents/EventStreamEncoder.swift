import Foundation
import ParleyAPI
import ParleyGeneration
import ParleyHTTP
import ParleyPrimitives
import ParleyStore

/// Turns generation events into the bytes of a `text/event-stream`, in one of the two modes the
/// stream endpoint offers: `html` (snapshot, reasoning, block, tail, tail_append, tail_html, error, done: for
/// the page) and `text` (snapshot, reasoning, delta, error, done: raw source text for API clients). Each
/// event carries its `id:` so EventSource resumes with Last-Event-ID, except the provisional `tail_html`,
/// which has none (never replayed: the next one, a snapshot or a resume supersedes it).
package struct EventStreamEncoder: Sendable {
    package enum Mode: Sendable {
        case html
        case text
    }

    let mode: Mode

    package init(mode: Mode) {
        self.mode = mode
    }

    /// The SSE frames for `events`; empty when none of them belongs to this mode. `id` writes an event's
    /// `id:` (the user event stream's ids also carry its notification position); it is called once
    /// per event written, in order.
    package func encode(_ events: [GenerationEvent], id: (GenerationEvent) -> String = { String($0.id) }) -> [UInt8] {
        var out: [UInt8] = []
        for event in events {
            guard let (name, data) = payload(event.payload) else { continue }
            if !event.isProvisional { out.append(contentsOf: "id: \(id(event))\n".utf8) }
            Self.appendFrame(name: name, data: data, to: &out)
        }
        return out
    }

    /// The same bytes as `encode`, in pieces to write in order: each snapshot's frame is a piece of its
    /// own, taken from `snapshots` so that subscribers getting the same snapshot share its bytes.
    package func pieces(_ events: [GenerationEvent], sharing snapshots: SnapshotFrameCache,
                id: (GenerationEvent) -> String = { String($0.id) }) -> [[UInt8]] {
        var pieces: [[UInt8]] = []
        var out: [UInt8] = []
        for event in events {
            if case .snapshot(let snapshot) = event.payload {
                out.append(contentsOf: "id: \(id(event))\n".utf8)
                pieces.append(out)
                out = []
                pieces.append(snapshots.frame(for: snapshot, mode: mode) {
                    var frame: [UInt8] = []
                    if let (name, data) = payload(event.payload) { Self.appendFrame(name: name, data: data, to: &frame) }
                    return frame
                })
                continue
            }
            guard let (name, data) = payload(event.payload) else { continue }
            if !event.isProvisional { out.append(contentsOf: "id: \(id(event))\n".utf8) }
            Self.appendFrame(name: name, data: data, to: &out)
        }
        if !out.isEmpty { pieces.append(out) }
        return pieces
    }

    /// `pieces` with the events' own ids, shared through `batches` by every stream in this mode that gets
    /// the same batch: a reply's frame is encoded once for all its subscribers.
    package func pieces(_ events: [GenerationEvent], sharing snapshots: SnapshotFrameCache,
                        batches: BatchFrameCache) -> [[UInt8]] {
        batches.pieces(for: events, mode: mode) { pieces(events, sharing: snapshots) }
    }

    /// An event without its `id:` line: `event:`, `data:` and the blank line that ends it.
    private static func appendFrame(name: String, data: String, to out: inout [UInt8]) {
        out.append(contentsOf: "event: \(name)\ndata: ".utf8)
        out.append(contentsOf: data.utf8)
        out.append(contentsOf: "\n\n".utf8)
    }

    private func payload(_ payload: GenerationEvent.Payload) -> (String, String)? {
        var json = JSONWriter()
        switch payload {
        case .snapshot(let snapshot):
            json.object {
                $0.field("message_id", snapshot.messageID)
                $0.field("status", snapshot.status.rawValue)
                $0.field("blocks", snapshot.blocks)
                $0.field("tail", snapshot.tail)
                // The provisional HTML of the tail is the page's (html mode only).
                if mode == .html { $0.field("tail_html", snapshot.tailHTML) }
                $0.field("content", snapshot.content)
                $0.field("content_length", snapshot.content.utf8.count)
                $0.field("reasoning", snapshot.reasoning)
                $0.rawField("parts", Self.partsJSON(snapshot.parts))
            }
            return ("snapshot", json.text)
        case .block(let index, let html):
            guard mode == .html else { return nil }
            json.object {
                $0.field("index", index)
                $0.field("html", html)
            }
            return ("block", json.text)
        case .tail(let text):
            guard mode == .html else { return nil }
            json.object { $0.field("text", text) }
            return ("tail", json.text)
        case .tailAppend(let text):
            guard mode == .html else { return nil }
            json.object { $0.field("text", text) }
            return ("tail_append", json.text)
        case .tailHTML(let html, let keep):
            guard mode == .html else { return nil }
            json.object {
                $0.field("html", html)
                if keep > 0 { $0.field("keep", keep) }
            }
            return ("tail_html", json.text)
        case .delta(let text):
            guard mode == .text else { return nil }
            json.object { $0.field("text", text) }
            return ("delta", json.text)
        case .reasoning(let text):
            json.object { $0.field("text", text) }
            return ("reasoning", json.text)
        case .error(let code, let message):
            json.object {
                $0.field("code", code.rawValue)
                $0.field("message", message)
            }
            return ("error", json.text)
        case .toolCall(let call):
            json.object {
                $0.field("id", call.id)
                $0.field("tool", call.tool)
                $0.field("name", call.name)
                $0.field("provider_id", call.providerID)
                $0.field("status", call.status.rawValue)
                if let arguments = call.arguments { $0.rawField("arguments", arguments.text) }
                if let decision = call.decision { $0.field("decision", decision.rawValue) }
            }
            return ("tool_call", json.text)
        case .toolCallDelta(let id, let fragment):
            json.object {
                $0.field("id", id)
                $0.field("arguments_delta", fragment)
            }
            return ("tool_call_delta", json.text)
        case .toolResult(let call):
            json.object {
                $0.field("id", call.id)
                $0.field("status", call.status.rawValue)
                $0.rawField("result", call.result?.json.text ?? "null")
            }
            return ("tool_result", json.text)
        case .surface(let surfaceID, let message):
            json.object {
                $0.field("surface_id", surfaceID)
                $0.rawField("message", message.text)
            }
            return ("surface", json.text)
        case .logprobs:
            // Only a /v1 call asks for them (its relay writes them); a page never gets them, in either mode.
            return nil
        case .done(let outcome):
            json.object {
                $0.field("status", outcome.status.rawValue)
                $0.field("finish_reason", outcome.finishReason?.rawValue)
                // The message resource's `usage`, so `done` and `GET /api/messages/{id}` agree.
                $0.rawField("usage", ReplyUsage(outcome.usage)?.json ?? "null")
                $0.field("patch", outcome.patch)
                $0.field("blocks", outcome.blockCount)
            }
            return ("done", json.text)
        }
    }

    /// A snapshot's parts: a text part names its blocks (`first_block`, `block_count`); a tool call is
    /// the stored part (`MessagePart+JSON`).
    static func partsJSON(_ parts: [SnapshotPart]) -> String {
        JSON.array(parts.map { part in
            switch part {
            case .text(let text, let first, let count):
                .object(["type": .string("text"), "text": .string(text), "first_block": .integer(Int64(first)),
                         "block_count": .integer(Int64(count))])
            case .reasoning(let text): MessagePart.reasoning(text).json
            case .toolCall(let call): call.json
            case .surface(let surface): MessagePart.surface(surface).json
            }
        }).text
    }
}
