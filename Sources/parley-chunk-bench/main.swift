import CJansson
import CYajl
import Foundation
import ParleyProviders
import ParleySSE

// `make bench` (issue 23): what parsing one upstream chunk into provider events costs, per parser, on
// real captures (llama-cpp-python's OpenAI stream; the hand-written Anthropic stream). JSONDecoder is
// how Parley read frames before issue 23; simdjson is how it reads them now (both through the
// providers' own parsers). jansson and yajl (yajl_tree) read the same OpenAI fields here only, to
// show what they would cost: yajl_tree cuts strings at a \u0000 and turns a lone surrogate into "?",
// so it could not keep every character anyway. Medians of 21 runs; run from the repository's root.

let fixtures = URL(fileURLWithPath: "Tests/ParleyProvidersTests/Fixtures")

func bytes(_ name: String) -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: fixtures.appendingPathComponent(name).path) else {
        fatalError("parley-chunk-bench: \(name) not found (run from the repository's root)")
    }
    return Array(data)
}

/// The body of a raw HTTP/1.1 response with chunked framing (raw_long.bin).
func dechunked(_ raw: [UInt8]) -> [UInt8] {
    let text = raw
    func line(from start: Int) -> Int? {
        var index = start
        while index + 1 < text.count {
            if text[index] == 0x0D, text[index + 1] == 0x0A { return index }
            index += 1
        }
        return nil
    }
    var position = 0
    while let end = line(from: position), end != position { position = end + 2 }
    position += 2  // the empty line after the headers
    var body: [UInt8] = []
    while let end = line(from: position),
          let size = Int(String(decoding: text[position..<end], as: UTF8.self), radix: 16), size > 0 {
        body += text[(end + 2)..<(end + 2 + size)]
        position = end + 2 + size + 2
    }
    return body
}

func events(_ body: [UInt8]) -> [SSEEvent] {
    var decoder = SSEDecoder()
    guard let events = try? decoder.decode(body) else { fatalError("parley-chunk-bench: a fixture is not SSE") }
    return events + decoder.finish()
}

let openAIStreams: [[SSEEvent]] = [events(bytes("stream1.sse")), events(bytes("tool_stream.sse")),
                                   events(bytes("openai_parallel_tools.sse")), events(dechunked(bytes("raw_long.bin")))]
let anthropicStreams: [[SSEEvent]] = [events(bytes("anthropic_tool_use.sse"))]
let openAIFrames = openAIStreams.reduce(0) { $0 + $1.count }
let anthropicFrames = anthropicStreams.reduce(0) { $0 + $1.count }
let frameBytes = openAIStreams.joined().map(\.data.utf8.count).sorted()

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

/// The CPU time `work` takes on this thread, in µs: the machine is shared, so wall time would count
/// other processes' turns.
func microseconds(_ work: () -> Void) -> Double {
    func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) * 1e6 + Double(time.tv_nsec) / 1e3
    }
    let start = now()
    work()
    return now() - start
}

/// Median, fastest and slowest µs per frame over 21 runs of `passes` passes over `frames` frames.
func timed(frames: Int, passes: Int = 20, _ pass: () -> Int) -> (median: Double, low: Double, high: Double) {
    var runs: [Double] = []
    var sink = 0
    for _ in 0..<21 {
        runs.append(microseconds { for _ in 0..<passes { sink &+= pass() } } / Double(frames * passes))
    }
    precondition(sink != 0, "nothing parsed")
    return (median(runs), runs.min() ?? 0, runs.max() ?? 0)
}

/// Every stream through a provider's own parser (events counted, so none is optimised away).
func providerPass(_ streams: [[SSEEvent]], _ format: ProviderStreamParser.Format,
                  _ decoding: ProviderStreamParser.FrameDecoding) -> Int {
    var count = 0
    for stream in streams {
        var parser = ProviderStreamParser(format, decoding: decoding)
        for event in stream {
            guard let out = try? parser.consume(event) else { break }
            count += out.count
        }
        count += (try? parser.finish())?.count ?? 0
    }
    return count
}

// MARK: - jansson and yajl_tree: the OpenAI fields Parley reads, as provider events

func janssonEvents(_ data: String) -> [ProviderEvent] {
    var text = data
    return text.withUTF8 { buffer -> [ProviderEvent] in
        var error = json_error_t()
        guard let root = buffer.withMemoryRebound(to: CChar.self, { json_loadb($0.baseAddress, $0.count, 0x10, &error) })
        else { return [] }
        defer { json_decref(root) }
        func get(_ value: UnsafeMutablePointer<json_t>?, _ key: StaticString) -> UnsafeMutablePointer<json_t>? {
            key.utf8Start.withMemoryRebound(to: CChar.self, capacity: key.utf8CodeUnitCount + 1) { json_object_get(value, $0) }
        }
        func string(_ value: UnsafeMutablePointer<json_t>?, _ key: StaticString) -> String? {
            guard let field = get(value, key), field.pointee.type == JSON_STRING,
                  let start = json_string_value(field) else { return nil }
            let count = json_string_length(field)
            let text = start.withMemoryRebound(to: UInt8.self, capacity: count) {
                String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
            }
            return text.isEmpty ? nil : text
        }
        var out: [ProviderEvent] = []
        guard let choices = get(root, "choices"), json_array_size(choices) > 0,
              let choice = json_array_get(choices, 0) else { return out }
        if let delta = get(choice, "delta") {
            if let reasoning = string(delta, "reasoning_content") ?? string(delta, "reasoning") { out.append(.reasoning(reasoning)) }
            if let content = string(delta, "content") { out.append(.text(content)) }
            if let calls = get(delta, "tool_calls") {
                for index in 0..<json_array_size(calls) {
                    let call = json_array_get(calls, index)
                    let function = get(call, "function")
                    let number = get(call, "index").map { Int(json_integer_value($0)) } ?? 0
                    out.append(.toolCall(ToolCallDelta(index: number, id: string(call, "id"), name: string(function, "name"),
                                                       argumentsDelta: string(function, "arguments") ?? "")))
                }
            }
        }
        if let reason = string(choice, "finish_reason") { out.append(.finish(.other(reason))) }
        return out
    }
}

func yajlEvents(_ data: String) -> [ProviderEvent] {
    var errors = [CChar](repeating: 0, count: 128)
    guard let root = yajl_tree_parse(data, &errors, errors.count) else { return [] }  // a NUL-ended copy
    defer { yajl_tree_free(root) }
    func field(_ value: yajl_val?, _ key: StaticString) -> yajl_val? {
        guard let value, value.pointee.type == yajl_t_object, let keys = value.pointee.u.object.keys else { return nil }
        let object = value.pointee.u.object
        return key.utf8Start.withMemoryRebound(to: CChar.self, capacity: key.utf8CodeUnitCount + 1) { name in
            for index in 0..<object.len where keys[index].map({ strcmp($0, name) == 0 }) == true {
                return object.values?[index]
            }
            return nil
        }
    }
    func string(_ value: yajl_val?, _ key: StaticString) -> String? {
        guard let field = field(value, key), field.pointee.type == yajl_t_string,
              let text = field.pointee.u.string.map({ String(cString: $0) }), !text.isEmpty else { return nil }
        return text
    }
    var out: [ProviderEvent] = []
    guard let choices = field(root, "choices"), choices.pointee.type == yajl_t_array, choices.pointee.u.array.len > 0,
          let choice = choices.pointee.u.array.values?[0] else { return out }
    if let delta = field(choice, "delta") {
        if let reasoning = string(delta, "reasoning_content") ?? string(delta, "reasoning") { out.append(.reasoning(reasoning)) }
        if let content = string(delta, "content") { out.append(.text(content)) }
        if let calls = field(delta, "tool_calls"), calls.pointee.type == yajl_t_array {
            for index in 0..<calls.pointee.u.array.len {
                let call = calls.pointee.u.array.values?[index]
                let function = field(call, "function")
                let number = field(call, "index").map { Int($0.pointee.u.number.i) } ?? 0
                out.append(.toolCall(ToolCallDelta(index: number, id: string(call, "id"), name: string(function, "name"),
                                                   argumentsDelta: string(function, "arguments") ?? "")))
            }
        }
    }
    if let reason = string(choice, "finish_reason") { out.append(.finish(.other(reason))) }
    return out
}

func localPass(_ parse: (String) -> [ProviderEvent]) -> Int {
    var count = 0
    for stream in openAIStreams {
        for event in stream where event.data != "[DONE]" { count += parse(event.data).count + 1 }
    }
    return count
}

// Each candidate reads the same text as JSONDecoder does, or the figures mean nothing.
func texts(_ events: [ProviderEvent]) -> String {
    events.compactMap { if case .text(let text) = $0 { text } else { nil } }.joined()
}
var reference = ProviderStreamParser(.openAI, decoding: .jsonDecoder)
let longStream = openAIStreams[3]
let expected = texts(longStream.flatMap { (try? reference.consume($0)) ?? [] })
precondition(!expected.isEmpty, "the long capture has text")
precondition(texts(longStream.filter { $0.data != "[DONE]" }.flatMap { janssonEvents($0.data) }) == expected, "jansson")
precondition(texts(longStream.filter { $0.data != "[DONE]" }.flatMap { yajlEvents($0.data) }) == expected, "yajl")
var simd = ProviderStreamParser(.openAI, decoding: .simdjson)
precondition(texts(longStream.flatMap { (try? simd.consume($0)) ?? [] }) == expected, "simdjson")

let rows: [(String, (median: Double, low: Double, high: Double))] = [
    ("OpenAI, JSONDecoder (before issue 23)", timed(frames: openAIFrames) { providerPass(openAIStreams, .openAI, .jsonDecoder) }),
    ("OpenAI, simdjson (served)", timed(frames: openAIFrames) { providerPass(openAIStreams, .openAI, .simdjson) }),
    ("OpenAI, jansson (fields read here)", timed(frames: openAIFrames) { localPass(janssonEvents) }),
    ("OpenAI, yajl_tree (fields read here)", timed(frames: openAIFrames) { localPass(yajlEvents) }),
    ("Anthropic, JSONDecoder (before issue 23)",
     timed(frames: anthropicFrames, passes: 200) { providerPass(anthropicStreams, .anthropic, .jsonDecoder) }),
    ("Anthropic, simdjson (served)",
     timed(frames: anthropicFrames, passes: 200) { providerPass(anthropicStreams, .anthropic, .simdjson) }),
]
let before = rows[0].1.median
print("# Upstream chunk parsing (issue 23)\n")
print("\(openAIFrames) OpenAI frames (\(frameBytes.first ?? 0)–\(frameBytes.last ?? 0) bytes, median \(frameBytes[frameBytes.count / 2])) from llama-cpp-python captures and a hand-written parallel-tools stream; \(anthropicFrames) Anthropic frames (hand-written). µs per frame, JSON text in, provider events out; thread CPU time, median of 21 runs (fastest–slowest).\n")
print("| parser | µs per frame | runs | vs JSONDecoder |")
print("|---|---|---|---|")
for (name, figure) in rows {
    let base = name.hasPrefix("Anthropic") ? rows[4].1.median : before
    print(String(format: "| %@ | %.2f | %.2f–%.2f | %.2f× |", name, figure.median, figure.low, figure.high, figure.median / base))
}
