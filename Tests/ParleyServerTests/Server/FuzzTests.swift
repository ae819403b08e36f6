import Foundation
import ParleyProviders
import ParleyTestSupport
import Synchronization
import XCTest

/// Seeded, bounded fuzzing of a real Parley: random and mutated HTTP requests, random JSON for every
/// endpoint, random orders of send, stop, continue, regenerate and delete. The server must never crash
/// or answer 5xx, health must answer throughout, and every stored reply must be whole: exactly the demo
/// model's answer when complete, a prefix of it otherwise (no text lost or doubled).
///
/// Every run prints its seed; `PARLEY_FUZZ_SEED=<seed> swift test --filter FuzzTests` replays it.
final class FuzzTests: XCTestCase {
    static let seed: UInt64 = ProcessInfo.processInfo.environment["PARLEY_FUZZ_SEED"].flatMap { UInt64($0) }
        ?? UInt64.random(in: 1...UInt64.max)
    /// Each test stops generating new cases after this long.
    static let budget: TimeInterval = 4

    override func setUp() {
        print("FuzzTests seed \(Self.seed) (replay: PARLEY_FUZZ_SEED=\(Self.seed))")
    }

    private func parley(_ settings: [String: String] = [:]) throws -> TestParley {
        try startParley(settings)
    }

    // MARK: - HTTP requests

    func testRandomAndMutatedHTTPRequests() async throws {
        let parley = try parley(["PARLEY_HEADER_TIMEOUT": "2", "PARLEY_MAX_BODY_BYTES": "65536", "PARLEY_SHUTDOWN_GRACE": "1"])
        let conversation = try await parley.conversation(["title": "fuzz"])
        let (_, assistant) = try await parley.send(conversation, "hello")
        _ = try await parley.finished(assistant)
        let health = HealthWatch(base: parley.base)
        let port = parley.app.port
        let targets = ["/api/health", "/api/conversations", "/api/conversations/\(conversation)",
                       "/api/messages/\(assistant)", "/api/messages/\(assistant)/stream?mode=text", "/",
                       "/app.js", "/api/conversations/\(conversation)/messages", "/api/messages/\(assistant)/stop"]
        let failures = Mutex<[String]>([])
        let cases = Atomic<Int>(0)
        let seed = Self.seed
        try await Blocking.run {
            // Threads of their own: concurrentPerform would run only as many at once as there are cores.
            let group = DispatchGroup()
            for thread in 0..<4 {
                group.enter()
                Thread.detachNewThread {
                    defer { group.leave() }
                    var random = SplitMix64(seed: seed &+ UInt64(thread))
                    let deadline = Date().addingTimeInterval(Self.budget)
                    while Date() < deadline {
                        let request = HTTPMutator.request(targets: targets, random: &random)
                        guard let connection = try? RawConnection(port: port) else { continue }
                        connection.send(request)
                        // An incomplete request gets no answer: it waits for the header deadline, not for this read.
                        let received = connection.readResponse(timeout: 0.5)
                        cases.add(1, ordering: .relaxed)
                        if let problem = HTTPMutator.problem(request: request, received: received) {
                            failures.withLock { $0.append(problem) }
                        }
                    }
                }
            }
            group.wait()
        }
        let problems = failures.withLock { $0 }
        XCTAssertTrue(problems.isEmpty, "seed \(seed): \(problems.prefix(5).joined(separator: "\n"))")
        print("FuzzTests: \(cases.load(ordering: .relaxed)) HTTP cases")
        XCTAssertGreaterThan(cases.load(ordering: .relaxed), 20, "seed \(seed): too few cases ran")
        XCTAssertEqual(health.stop(), 0, "seed \(seed): health failed during the run")
        try await assertStoreConsistent(parley, conversations: [conversation])
    }

    // MARK: - JSON bodies

    func testRandomJSONForEveryEndpoint() async throws {
        let parley = try parley()
        let health = HealthWatch(base: parley.base)
        var random = SplitMix64(seed: Self.seed)
        var conversations = [try await parley.conversation()]
        var messages: [String] = []
        let started = Date()
        var cases = 0
        while Date().timeIntervalSince(started) < Self.budget {
            let conversation = conversations.randomElement(using: &random) ?? "x"
            let message = messages.randomElement(using: &random) ?? "x"
            let (method, path, fields) = [
                ("POST", "/api/conversations", ["title", "model", "system_prompt"]),
                ("PATCH", "/api/conversations/\(conversation)", ["title", "model", "system_prompt"]),
                ("PUT", "/api/conversations/\(conversation)/current", ["message_id"]),
                ("POST", "/api/conversations/\(conversation)/messages", ["content", "parent_id", "model"]),
                ("POST", "/api/messages/\(message)/regenerate", ["model"]),
                ("POST", "/api/messages/\(message)/continue", []),
                ("POST", "/api/messages/\(message)/stop", []),
                ("GET", "/api/conversations?limit=\(JSONFuzz.string(&random).prefix(8))&cursor=\(JSONFuzz.string(&random).prefix(8))", []),
            ].randomElement(using: &random) ?? ("GET", "/", [])
            let body = method == "GET" ? nil : JSONFuzz.body(fields: fields, known: messages + conversations, random: &random)
            let encodedPath = path.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? path
            let reply = try await parley.call(method, encodedPath, body: body)
            cases += 1
            let sent = body.map { String(decoding: $0.prefix(300), as: UTF8.self) } ?? ""
            XCTAssertLessThan(reply.status, 500, "seed \(Self.seed): \(method) \(path) \(sent) -> \(reply.text)")
            if reply.status >= 400 {
                XCTAssertNotNil(reply.errorCode, "seed \(Self.seed): \(method) \(path) -> \(reply.text)")
            }
            if reply.status == 201, let id = reply.json["id"] as? String, path == "/api/conversations" {
                conversations.append(id)
            }
            for key in ["user_message", "assistant_message"] {
                if let id = (reply.json[key] as? [String: Any])?["id"] as? String { messages.append(id) }
            }
        }
        XCTAssertGreaterThan(cases, 20)
        XCTAssertEqual(health.stop(), 0, "seed \(Self.seed): health failed during the run")
    }

    // MARK: - Orders of operations

    func testRandomOrdersOfSendStopContinueRegenerateAndDelete() async throws {
        let parley = try parley(["PARLEY_DEMO_TOKENS_PER_SECOND": "300", "PARLEY_MAX_GENERATIONS_PER_USER": "32",
                                 "PARLEY_FLUSH_INTERVAL_MS": "20"])
        let health = HealthWatch(base: parley.base)
        let state = SharedState()
        for _ in 0..<3 {
            let id = try await parley.conversation()
            state.withLock { $0.conversations.append(id) }
        }
        let seed = Self.seed
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var random = SplitMix64(seed: seed &+ 100 &+ UInt64(worker))
                    let deadline = Date().addingTimeInterval(Self.budget)
                    while Date() < deadline {
                        try await Self.randomOperation(parley, state: state, random: &random)
                    }
                }
            }
            try await group.waitForAll()
        }
        let (conversations, failures) = state.withLock { ($0.conversations, $0.failures) }
        XCTAssertTrue(failures.isEmpty, "seed \(seed): \(failures.prefix(5).joined(separator: "\n"))")
        try await assertStoreConsistent(parley, conversations: conversations)
        XCTAssertEqual(health.stop(), 0, "seed \(seed): health failed during the run")
    }

    private struct OperationState {
        var conversations: [String] = []
        /// Assistant message ids, with the conversation they belong to.
        var replies: [(id: String, conversation: String)] = []
        var failures: [String] = []
    }

    private final class SharedState: Sendable {
        private let state = Mutex(OperationState())
        func withLock<T>(_ body: (inout OperationState) -> T) -> T { state.withLock { body(&$0) } }
    }

    private static func randomOperation(_ parley: TestParley, state: SharedState,
                                        random: inout SplitMix64) async throws {
        let (conversation, reply) = state.withLock { state in
            (state.conversations.randomElement(using: &random), state.replies.randomElement(using: &random))
        }
        let choice = Int.random(in: 0..<100, using: &random)
        let method: String
        let path: String
        var json: [String: Any]?
        switch choice {
        case 0..<35:
            method = "POST"
            path = "/api/conversations/\(conversation ?? "x")/messages"
            json = ["content": JSONFuzz.words(&random)]
        case 35..<55:
            method = "POST"
            path = "/api/messages/\(reply?.id ?? "x")/stop"
        case 55..<72:
            method = "POST"
            path = "/api/messages/\(reply?.id ?? "x")/continue"
        case 72..<90:
            method = "POST"
            path = "/api/messages/\(reply?.id ?? "x")/regenerate"
            json = [:]
        case 90..<95:
            method = "PUT"
            path = "/api/conversations/\(conversation ?? "x")/current"
            json = ["message_id": reply?.id ?? "x"]
        default:
            method = "DELETE"
            path = "/api/conversations/\(conversation ?? "x")"
        }
        let answer = try await parley.call(method, path, json: json)
        state.withLock { state in
            if answer.status >= 500 || (answer.status >= 400 && answer.errorCode == nil) {
                state.failures.append("\(method) \(path) -> \(answer.status) \(answer.text)")
            }
            guard answer.status < 300, let conversation else { return }
            if method == "DELETE" {
                state.conversations.removeAll { $0 == conversation }
                state.replies.removeAll { $0.conversation == conversation }
            }
            let assistant = (answer.json["assistant_message"] as? [String: Any])?["id"] as? String
                ?? (path.hasSuffix("/regenerate") ? answer.json["id"] as? String : nil)
            if let assistant, let owner = answer.json["conversation_id"] as? String
                ?? (answer.json["assistant_message"] as? [String: Any])?["conversation_id"] as? String {
                state.replies.append((assistant, owner))
            }
        }
        if method == "DELETE" {
            let created = try await parley.call("POST", "/api/conversations", json: [:])
            if let id = created.json["id"] as? String { state.withLock { $0.conversations.append(id) } }
        }
    }

    // MARK: - Consistency

    /// Waits for every reply to end, then checks each stored assistant message against the demo model's
    /// answer to its user message: equal when complete, a prefix otherwise.
    private func assertStoreConsistent(_ parley: TestParley, conversations: [String]) async throws {
        for conversation in conversations {
            let shown = try await parley.call("GET", "/api/conversations/\(conversation)")
            guard shown.status == 200 else { continue }
            for message in shown.json["messages"] as? [[String: Any]] ?? [] {
                let siblings = (message["siblings"] as? [String: Any])?["ids"] as? [String] ?? []
                for id in siblings where message["role"] as? String == "assistant" {
                    try await assertWhole(parley, assistant: id)
                }
            }
        }
    }

    private func assertWhole(_ parley: TestParley, assistant id: String) async throws {
        let reply = try await parley.finished(id, timeout: .seconds(30))
        let status = reply["status"] as? String ?? ""
        XCTAssertTrue(["complete", "stopped"].contains(status), "seed \(Self.seed): \(id) is \(status)")
        let parentID = try XCTUnwrap(reply["parent_id"] as? String)
        let parent = try await parley.message(parentID)
        let expected = DemoProvider.answer(to: parent["content"] as? String ?? "")
        let content = reply["content"] as? String ?? ""
        if status == "complete" {
            XCTAssertEqual(content, expected, "seed \(Self.seed): \(id) complete but not the whole answer")
        } else {
            XCTAssertTrue(expected.hasPrefix(content), "seed \(Self.seed): \(id) is not a prefix of the answer: \(content)")
        }
        XCTAssertNotNil(reply["html"] as? String, "seed \(Self.seed): \(id) has no HTML")
    }
}

/// Polls `/api/health` on its own thread until stopped; counts the answers that were not 200.
private final class HealthWatch: Sendable {
    private let failures = Atomic<Int>(0)
    private let running = Atomic<Bool>(true)
    private let done = DispatchSemaphore(value: 0)

    init(base: String) {
        let thread = Thread { [self] in
            let client = TestHTTPClient()
            while running.load(ordering: .relaxed) {
                if (try? client.request(base + "/api/health", timeout: 5).status) != 200 { failures.add(1, ordering: .relaxed) }
                usleep(50_000)
            }
            done.signal()
        }
        thread.start()
    }

    /// Stops polling; returns the number of failed checks.
    func stop() -> Int {
        running.store(false, ordering: .relaxed)
        done.wait()
        return failures.load(ordering: .relaxed)
    }
}

/// Builds random and mutated HTTP/1.1 requests.
private enum HTTPMutator {
    static func request(targets: [String], random: inout SplitMix64) -> [UInt8] {
        let method = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "get", "P\0ST", "GET /"]
            .randomElement(using: &random) ?? "GET"
        let target = targets.randomElement(using: &random) ?? "/"
        let version = ["HTTP/1.1", "HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/1.1x", ""]
            .randomElement(using: &random) ?? "HTTP/1.1"
        var body = JSONFuzz.body(fields: ["title", "content", "model", "message_id"], known: [], random: &random)
        var headers = ["Host: 127.0.0.1", "Content-Type: application/json"]
        let framing = Int.random(in: 0..<8, using: &random)
        switch framing {
        case 0: headers.append("Content-Length: \(body.count)")
        case 1: headers.append("Content-Length: \(Int.random(in: -5...(body.count * 2), using: &random))")
        case 2:
            headers.append("Transfer-Encoding: chunked")
            body = Array(String(body.count, radix: 16).utf8) + [13, 10] + body + Array("\r\n0\r\n\r\n".utf8)
        case 3: headers += ["Content-Length: \(body.count)", "Transfer-Encoding: chunked"]
        case 4: headers += ["Content-Length: \(body.count)", "Content-Length: \(body.count + 1)"]
        case 5: headers.append(["Transfer-Encoding: gzip", "Transfer-Encoding : chunked", "Transfer-Encoding: identity"]
            .randomElement(using: &random) ?? "")
        case 6: headers.append("Content-Length: 99999999999999999999999")
        default: body = []
        }
        for _ in 0..<Int.random(in: 0...3, using: &random) {
            headers.append([
                "Origin: https://evil.example", "Host: evil.example", "X-\(JSONFuzz.words(&random)): 1",
                "Last-Event-ID: \(Int64.random(in: -2...Int64.max, using: &random))", "Connection: close",
                "Expect: 100-continue", String(repeating: "A", count: Int.random(in: 1...40_000, using: &random)),
                "Cookie: \(String(repeating: "a=b; ", count: 100))", "Range: bytes=0-1",
            ].randomElement(using: &random) ?? "")
        }
        headers.shuffle(using: &random)
        var bytes = Array("\(method) \(target) \(version)\r\n\(headers.joined(separator: "\r\n"))\r\n\r\n".utf8) + body
        // Then break it a little, or a lot.
        for _ in 0..<Int.random(in: 0...4, using: &random) where !bytes.isEmpty {
            let index = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: bytes[index] = UInt8.random(in: 0...255, using: &random)
            case 1: bytes.insert(contentsOf: [0, 13, 10, 0xFF, 0xC3, 32, 58].shuffled(using: &random).prefix(3), at: index)
            case 2: bytes.removeSubrange(index..<min(bytes.count, index + Int.random(in: 1...20, using: &random)))
            default: bytes = Array(bytes[..<index])
            }
        }
        return bytes
    }

    /// A 5xx answer, unless it is the honest answer to what was sent: 501 for a transfer coding the
    /// server does not implement, 505 for an HTTP version it does not speak.
    static func problem(request: [UInt8], received: RawConnection.Received) -> String? {
        let text = received.text
        guard text.hasPrefix("HTTP/1.1 "), let status = Int(text.dropFirst(9).prefix(3)), status >= 500 else {
            return nil
        }
        let sent = String(decoding: request, as: UTF8.self)
        if status == 501, sent.lowercased().contains("transfer-encoding") { return nil }
        if status == 505, !(sent.split(separator: "\r\n").first ?? "").hasSuffix("HTTP/1.1"),
           !(sent.split(separator: "\r\n").first ?? "").hasSuffix("HTTP/1.0") {
            return nil
        }
        return "\(status) for \(sent.prefix(300).debugDescription): \(text.prefix(300))"
    }
}

/// Random JSON values: every type, nesting, sizes and awkward Unicode.
private enum JSONFuzz {
    static let awkward = ["\u{0}", "\u{FEFF}", "\u{200B}", "\u{2060}", "\u{202E}", "é", "e\u{301}", "👩‍👩‍👧",
                          "\\", "\"", "</script>", "\n", "\r\n", "𝕏", "\u{FFFD}", "\u{7F}", "%00", "' OR 1=1 --"]

    static func words(_ random: inout SplitMix64) -> String {
        (0..<Int.random(in: 1...6, using: &random)).map { _ in
            ["hello", "world", "**bold**", "`code`", "# title", "- item", "[a](b)", awkward.randomElement(using: &random) ?? ""]
                .randomElement(using: &random) ?? ""
        }.joined(separator: " ")
    }

    static func string(_ random: inout SplitMix64) -> String {
        switch Int.random(in: 0..<6, using: &random) {
        case 0: ""
        case 1: String(repeating: "x", count: Int.random(in: 150...70_000, using: &random))
        case 2: awkward.shuffled(using: &random).prefix(4).joined()
        default: words(&random)
        }
    }

    static func value(depth: Int, known: [String], random: inout SplitMix64) -> Any {
        switch Int.random(in: 0..<(depth > 3 ? 6 : 8), using: &random) {
        case 0: return NSNull()
        case 1: return Bool.random(using: &random)
        case 2: return [Int.min, -1, 0, 1, Int.max].randomElement(using: &random) ?? 0
        case 3: return Double.random(in: -1e300...1e300, using: &random)
        case 4: return known.randomElement(using: &random) ?? string(&random)
        case 5: return string(&random)
        case 6: return (0..<Int.random(in: 0...3, using: &random)).map { _ in value(depth: depth + 1, known: known, random: &random) }
        default:
            var object: [String: Any] = [:]
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                object[words(&random)] = value(depth: depth + 1, known: known, random: &random)
            }
            return object
        }
    }

    /// A request body: usually an object with some of `fields`, sometimes not an object, invalid JSON
    /// or deep nesting.
    static func body(fields: [String], known: [String], random: inout SplitMix64) -> [UInt8] {
        switch Int.random(in: 0..<10, using: &random) {
        case 0: return Array("{\"title\":".utf8)
        case 1: return Array((String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)).utf8)
        case 2: return (0..<Int.random(in: 0...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        case 3: return Array("[1,2]".utf8)
        case 4: return Array("{\"content\":\"\\ud800\"}".utf8)
        default:
            var object: [String: Any] = [:]
            for field in fields where Bool.random(using: &random) {
                object[field] = value(depth: 0, known: known, random: &random)
            }
            if Int.random(in: 0..<4, using: &random) == 0 { object[words(&random)] = 1 }
            return (try? JSONSerialization.data(withJSONObject: object)).map(Array.init) ?? []
        }
    }
}
