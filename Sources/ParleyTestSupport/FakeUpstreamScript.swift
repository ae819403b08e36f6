import Foundation
import Synchronization

extension FakeUpstream {
    /// A request as the fake upstream received it, so tests can check what the client sent.
    public struct RecordedRequest: Sendable {
        public let method: String
        /// The request target as sent (path and query).
        public let path: String
        public let headers: [(String, String)]
        public let body: [UInt8]

        /// The first header with this name (case-insensitive).
        public func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }

        /// The body parsed as a JSON object, if it is one.
        public var jsonBody: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
        }

        public var bodyText: String { String(decoding: body, as: UTF8.self) }
    }

    /// A one-shot gate a script can wait on (`Step.wait`): the test opens it when what it waits for has
    /// happened, instead of guessing a sleep long enough for a loaded machine. Thread-safe.
    public final class Gate: Sendable {
        private let state = Mutex((reached: false, open: false))

        public init() {}

        /// Lets every script waiting on this gate go on (and any that reaches it later pass straight through).
        public func open() { state.withLock { $0.open = true } }

        public var isOpen: Bool { state.withLock { $0.open } }

        /// True once a script has arrived at this gate (it may be waiting there or past it).
        public var isReached: Bool { state.withLock { $0.reached } }

        func markReached() { state.withLock { $0.reached = true } }

        /// Polls until a script has reached the gate, or `timeout` passes; returns whether it did.
        public func waitUntilReached(timeout: Duration = .seconds(20)) async -> Bool {
            await poll(timeout) { $0.isReached }
        }

        /// Polls until the gate is open (when a test uses it as a one-shot signal), or `timeout` passes.
        public func waitUntilOpen(timeout: Duration = .seconds(20)) async -> Bool {
            await poll(timeout) { $0.isOpen }
        }

        private func poll(_ timeout: Duration, _ condition: (Gate) -> Bool) async -> Bool {
            let deadline = ContinuousClock.now + timeout
            while !condition(self) {
                if ContinuousClock.now >= deadline { return false }
                try? await Task.sleep(for: .milliseconds(2))
            }
            return true
        }
    }

    /// What the fake upstream does for one request: the status and headers, then the steps in order.
    public struct Script: Sendable {
        /// How the body is delimited on the wire.
        public enum Framing: Sendable {
            /// `Transfer-Encoding: chunked`; every `.send` is one chunk and one TCP write.
            case chunked
            /// `Connection: close`; the body ends when the server closes the socket.
            case close
            /// `Content-Length` computed from the sum of the `.send` steps.
            case contentLength
        }

        public enum Step: Sendable {
            /// One TCP write (with chunked framing: one chunk).
            case send([UInt8])
            case sleep(milliseconds: Int)
            /// Abrupt disconnect: the socket is closed with no terminating chunk.
            case close
            /// Hang, sending nothing, until the client disconnects (recorded with its time).
            case stall
            /// Hold here, sending nothing, until the test opens the gate (or the client disconnects,
            /// which is recorded as with `.stall`). Marks the gate as reached when it gets there.
            /// For "only after the client is attached" or "only after the test saw X" without sleeping.
            case wait(Gate)

            /// One write of the UTF-8 bytes of `text`.
            public static func send(_ text: String) -> Step { .send(Array(text.utf8)) }
        }

        public var status: Int
        public var headers: [(String, String)]
        public var framing: Framing
        public var steps: [Step]
        /// When true, `steps` are the whole raw response (status line and headers included); the
        /// connection is closed after the last step.
        public var raw: Bool

        public init(status: Int = 200, headers: [(String, String)] = [], framing: Framing = .chunked,
                    steps: [Step] = []) {
            self.status = status
            self.headers = headers
            self.framing = framing
            self.steps = steps
            self.raw = false
        }

        /// Replays raw response bytes (as captured from a socket), written in pieces cut at `cuts`.
        public static func raw(_ bytes: [UInt8], cuts: [Int] = []) -> Script {
            var script = Script(steps: pieces(bytes, cuts: cuts).map { .send($0) })
            script.raw = true
            return script
        }

        /// Accepts the request and never answers, not even a status line, until the client goes.
        public static var noResponse: Script {
            var script = Script.raw([])
            script.steps = [.stall]
            return script
        }

        /// A JSON (or any text) response in one piece.
        public static func json(_ body: String, status: Int = 200, headers: [(String, String)] = []) -> Script {
            Script(status: status, headers: [("Content-Type", "application/json")] + headers,
                   framing: .contentLength, steps: [.send(Array(body.utf8))])
        }

        /// A `text/event-stream` response whose body is written in pieces cut at the given offsets.
        public static func eventStream(_ body: [UInt8], cuts: [Int] = [], framing: Framing = .chunked,
                                       then ending: [Step] = []) -> Script {
            Script(headers: [("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store")],
                   framing: framing, steps: pieces(body, cuts: cuts).map { .send($0) } + ending)
        }

        /// A `text/event-stream` response sending each string as its own write, `delay` ms apart.
        public static func eventStream(writes: [String], delayMilliseconds delay: Int = 0,
                                       then ending: [Step] = []) -> Script {
            var steps: [Step] = []
            for write in writes {
                if delay > 0, !steps.isEmpty { steps.append(.sleep(milliseconds: delay)) }
                steps.append(.send(Array(write.utf8)))
            }
            return Script(headers: [("Content-Type", "text/event-stream; charset=utf-8")], steps: steps + ending)
        }

        /// An OpenAI-style Chat Completions stream: one chunk per token, then the finish reason and `[DONE]`.
        public static func openAIChat(tokens: [String], finishReason: String = "stop",
                                      delayMilliseconds: Int = 0) -> Script {
            func chunk(_ delta: String, finish: String?) -> String {
                let reason = finish.map { "\"\($0)\"" } ?? "null"
                return "data: {\"id\":\"chatcmpl-fake\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":\(delta),\"finish_reason\":\(reason)}]}\n\n"
            }
            var writes = [chunk("{\"role\":\"assistant\"}", finish: nil)]
            writes += tokens.map { chunk("{\"content\":\(jsonString($0))}", finish: nil) }
            writes.append(chunk("{}", finish: finishReason))
            writes.append("data: [DONE]\n\n")
            return eventStream(writes: writes, delayMilliseconds: delayMilliseconds)
        }

        /// An Anthropic Messages stream: message_start, one text block with one delta per token, stop.
        public static func anthropicMessages(tokens: [String], stopReason: String = "end_turn",
                                             delayMilliseconds: Int = 0) -> Script {
            func event(_ type: String, _ json: String) -> String { "event: \(type)\ndata: \(json)\n\n" }
            var writes = [
                event("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_fake\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}"),
                event("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}"),
                event("ping", "{\"type\":\"ping\"}"),
            ]
            writes += tokens.map {
                event("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\(jsonString($0))}}")
            }
            writes.append(event("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}"))
            writes.append(event("message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"\(stopReason)\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":\(tokens.count)}}"))
            writes.append(event("message_stop", "{\"type\":\"message_stop\"}"))
            return eventStream(writes: writes, delayMilliseconds: delayMilliseconds)
        }

        /// Splits bytes at the given offsets (out-of-range and repeated offsets are ignored).
        public static func pieces(_ bytes: [UInt8], cuts: [Int]) -> [[UInt8]] {
            var result: [[UInt8]] = []
            var start = 0
            for cut in Set(cuts).sorted() where cut > start && cut < bytes.count {
                result.append(Array(bytes[start..<cut]))
                start = cut
            }
            if start < bytes.count { result.append(Array(bytes[start...])) }
            return result
        }

        private static func jsonString(_ text: String) -> String {
            let data = (try? JSONSerialization.data(withJSONObject: [text], options: [.fragmentsAllowed])) ?? Data("[\"\"]".utf8)
            let array = String(decoding: data, as: UTF8.self)
            return String(array.dropFirst().dropLast())
        }
    }
}
