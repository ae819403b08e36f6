import Foundation
import ParleyTestSupport

/// OpenAI-compatible SSE frames of tool calls, written by hand so tests control every byte.
enum ToolStreams {
    /// The first fragment of call `index`: its id and function name.
    static func callStart(index: Int = 0, id: String, name: String) -> String {
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":\(index),\"id\":\"\(id)\","
            + "\"type\":\"function\",\"function\":{\"name\":\"\(name)\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n"
    }

    /// A fragment of call `index`'s arguments.
    static func arguments(index: Int = 0, _ fragment: String) -> String {
        let escaped = String(decoding: try! JSONSerialization.data(withJSONObject: [fragment]), as: UTF8.self)
        return "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":\(index),"
            + "\"function\":{\"arguments\":\(escaped.dropFirst().dropLast())}}]},\"finish_reason\":null}]}\n\n"
    }

    /// Text, then one call per (id, name, argument fragments), then `finish_reason: tool_calls`.
    static func round(text: [String] = [], calls: [(id: String, name: String, fragments: [String])]) -> FakeUpstream.Script {
        var writes = text.map(UpstreamStreams.chunk)
        for (index, call) in calls.enumerated() {
            writes.append(callStart(index: index, id: call.id, name: call.name))
            writes += call.fragments.map { arguments(index: index, $0) }
        }
        writes.append(UpstreamStreams.finish("tool_calls"))
        return .eventStream(writes: writes)
    }

    /// The tool messages of an upstream request, in order.
    static func toolMessages(_ request: FakeUpstream.RecordedRequest) -> [[String: Any]] {
        ((request.jsonBody?["messages"] as? [[String: Any]]) ?? []).filter { $0["role"] as? String == "tool" }
    }
}
