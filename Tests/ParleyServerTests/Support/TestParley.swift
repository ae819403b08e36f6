import Foundation
import ParleyEvents
import ParleyMedia
import ParleySSE
import ParleyServer
import ParleyTestSupport
import XCTest

/// A real Parley (the same `ParleyApp` that `parley` runs) on a loopback port, with its SQLite file in
/// a temporary folder. Settings are the environment variables of the README.
final class TestParley: Sendable {
    let directory: URL
    let app: ParleyApp
    let base: String

    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The debug build's `parley-media-worker` (`swift build --build-tests` builds it).
    static let mediaWorker = repositoryRoot.appendingPathComponent(".build/debug/parley-media-worker")

    /// `configure` changes what the environment cannot say (a test's clock).
    init(_ settings: [String: String] = [:], directory: URL? = nil,
         configure: (inout ParleyConfiguration) -> Void = { _ in }) throws {
        let directory = directory ?? TestFiles.directory("parley-test")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory
        var environment = [
            "PARLEY_PORT": "0",
            "PARLEY_DB": directory.appendingPathComponent("parley.db").path,
            "PARLEY_PUBLIC": Self.repositoryRoot.appendingPathComponent("Public").path,
            "PARLEY_DEMO_TOKENS_PER_SECOND": "0",
            // A title request would take the fake upstream's next scripted answer and rename
            // conversations under tests about other things; ConversationTitleTests turn titles on.
            "PARLEY_TITLES": "off",
        ]
        environment.merge(settings) { $1 }
        var configuration = try ParleyConfiguration(environment: environment, arguments: [])
        // Uploads are decoded by the debug `parley-media-worker`, whatever the test process is.
        configuration.media.workerExecutable = Self.mediaWorker
        configure(&configuration)
        app = try ParleyApp(configuration: configuration)
        try app.start()
        base = "http://127.0.0.1:\(app.port)"
    }

    /// A client of a running node whose requests go to `base` (nginx in front: `through(_:)`).
    init(app: ParleyApp, directory: URL, base: String) {
        self.app = app
        self.directory = directory
        self.base = base
    }

    /// A Parley whose OpenAI-compatible provider is `upstream`, offering the model `openai:fake`.
    convenience init(upstream: FakeUpstream, _ settings: [String: String] = [:]) throws {
        try self.init(["PARLEY_OPENAI_BASE_URL": upstream.baseURL + "/v1", "PARLEY_OPENAI_MODELS": "fake"]
            .merging(settings) { $1 })
    }

    func stop() async {
        await app.shutdown()
    }

    // MARK: - Requests (blocking libcurl calls run on their own thread, off the Swift concurrency pool)

    struct Reply: @unchecked Sendable {
        let status: Int
        let headers: [String: String]
        let text: String
        /// The body as a dictionary, read with JSONDecoder (JSONSerialization would drop a leading U+FEFF).
        var json: [String: Any] { ExactJSON.parse(text)?.foundation as? [String: Any] ?? [:] }
        var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
    }

    func call(_ method: String, _ path: String, json: Any? = nil, body: [UInt8]? = nil,
              headers: [(String, String)] = []) async throws -> Reply {
        var payload = body
        if let json {
            payload = Array(try JSONSerialization.data(withJSONObject: json))
        }
        let url = base + path
        let sendBody = payload
        return try await Blocking.run {
            let response = try TestHTTPClient().request(method, url, headers: headers + [("Content-Type", "application/json")],
                                                        body: sendBody, timeout: 30)
            return Reply(status: response.status, headers: response.headers, text: response.text)
        }
    }

    /// Creates a conversation and returns its id.
    func conversation(_ fields: [String: Any] = [:]) async throws -> String {
        let reply = try await call("POST", "/api/conversations", json: fields)
        XCTAssertEqual(reply.status, 201, reply.text)
        return try XCTUnwrap(reply.json["id"] as? String)
    }

    /// Sends a user message; returns (user id, assistant id).
    func send(_ conversationID: String, _ content: String, extra: [String: Any] = [:]) async throws -> (String, String) {
        var fields = extra
        fields["content"] = content
        let reply = try await call("POST", "/api/conversations/\(conversationID)/messages", json: fields)
        XCTAssertEqual(reply.status, 201, reply.text)
        let user = try XCTUnwrap((reply.json["user_message"] as? [String: Any])?["id"] as? String)
        let assistant = try XCTUnwrap((reply.json["assistant_message"] as? [String: Any])?["id"] as? String)
        return (user, assistant)
    }

    func message(_ id: String, headers: [(String, String)] = []) async throws -> [String: Any] {
        let reply = try await call("GET", "/api/messages/\(id)", headers: headers)
        XCTAssertEqual(reply.status, 200, reply.text)
        return reply.json
    }

    // MARK: - Event streams

    /// Reads the message's event stream until `done` or `until` holds, then closes it. A read that
    /// gets neither within `timeout` throws (with what arrived): a stream that stalls fails the test.
    /// `attached`, when given, is opened as soon as the first event (the snapshot or the replay) has
    /// arrived: a script waiting on it starts only once this client is subscribed, however long the
    /// connection took (no "sleep long enough for the client to connect").
    /// `lastEventID` goes in the `Last-Event-ID` header, `query` is appended as is (`last_event_id=5`).
    func events(_ messageID: String, mode: String? = nil, lastEventID: Int64? = nil, query: String? = nil,
                attached: FakeUpstream.Gate? = nil,
                until: @escaping @Sendable ([SSEEvent]) -> Bool = { _ in false },
                timeout: TimeInterval = 20) async throws -> StreamRead {
        try await read(messageID, mode: mode, lastEventID: lastEventID, query: query, attached: attached,
                       limit: .timeout(timeout), until: until)
    }

    /// Reads the message's event stream for at most `window` seconds (less when `done` comes or
    /// `until` holds) and returns what arrived: the end of the window is an expected outcome, for
    /// deliberately short reads (reconnect tests) and "what does an idle stream send".
    func events(_ messageID: String, readingFor window: TimeInterval, mode: String? = nil,
                lastEventID: Int64? = nil, attached: FakeUpstream.Gate? = nil,
                until: @escaping @Sendable ([SSEEvent]) -> Bool = { _ in false }) async throws -> StreamRead {
        try await read(messageID, mode: mode, lastEventID: lastEventID, query: nil, attached: attached,
                       limit: .window(window), until: until)
    }

    private func read(
        _ messageID: String, mode: String?, lastEventID: Int64?, query: String?, attached: FakeUpstream.Gate?,
        limit: EventReadLimit, until: @escaping @Sendable ([SSEEvent]) -> Bool
    ) async throws -> StreamRead {
        let parameters = [mode.map { "mode=\($0)" }, query].compactMap { $0 }
        let url = base + "/api/messages/\(messageID)/stream"
            + (parameters.isEmpty ? "" : "?" + parameters.joined(separator: "&"))
        let headers = lastEventID.map { [("Last-Event-ID", String($0))] } ?? []
        return try await Blocking.run {
            try TestHTTPClient().readEvents(url, headers: headers, limit: limit) { events in
                if let attached, !events.isEmpty { attached.open() }
                return events.contains { $0.type == "done" } || until(events)
            }
        }
    }

    /// Polls the message until it is no longer streaming; fails the test (and throws) after `timeout`.
    func finished(_ messageID: String, timeout: Duration = .seconds(20), headers: [(String, String)] = [],
                  file: StaticString = #filePath, line: UInt = #line) async throws -> [String: Any] {
        let deadline = Deadline(timeout)
        var message: [String: Any] = [:]
        let ended = try await deadline.wait(every: .milliseconds(20)) {
            message = try await self.message(messageID, headers: headers)
            return message["status"] as? String != "streaming"
        }
        guard ended else {
            XCTFail("message \(messageID) still streaming after \(timeout): \(message)", file: file, line: line)
            throw TestParleyError.timedOut("message \(messageID) still streaming after \(timeout)")
        }
        return message
    }
}

enum TestParleyError: Error {
    case timedOut(String)
}

// MARK: - Servers that end with the test

extension XCTestCase {
    /// A Parley that is stopped when this test ends, passed, failed or thrown: every test that
    /// starts a server starts it here (or with `startUpstream` / `startProcess`).
    func startParley(_ settings: [String: String] = [:], directory: URL? = nil,
                     configure: (inout ParleyConfiguration) -> Void = { _ in }) throws -> TestParley {
        let parley = try TestParley(settings, directory: directory, configure: configure)
        addTeardownBlock { await parley.stop() }
        return parley
    }

    /// A Parley in front of `upstream` (model `openai:fake`), stopped when this test ends.
    func startParley(upstream: FakeUpstream, _ settings: [String: String] = [:]) throws -> TestParley {
        let parley = try TestParley(upstream: upstream, settings)
        addTeardownBlock { await parley.stop() }
        return parley
    }

    /// A fake upstream that is shut down when this test ends.
    func startUpstream(handler: (@Sendable (FakeUpstream.RecordedRequest) -> FakeUpstream.Script)? = nil) throws
        -> FakeUpstream {
        let upstream = try handler.map { try FakeUpstream(handler: $0) } ?? FakeUpstream()
        addTeardownBlock { upstream.shutdown() }
        return upstream
    }

    /// The `parley` executable, killed (if still running) when this test ends.
    func startProcess(environment: [String: String], arguments: [String] = []) throws -> ParleyProcess {
        let process = try ParleyProcess(environment: environment, arguments: arguments)
        addTeardownBlock { process.stop() }
        return process
    }
}

/// Temporary folders of this test run, all under one folder that is removed when the test bundle
/// finishes (a run used to leave one folder with a SQLite database per test in /tmp).
enum TestFiles {
    private static let root: URL = {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("parley-tests-\(UUID().uuidString)")
        XCTestObservationCenter.shared.addTestObserver(RemoveWhenFinished(root))
        return root
    }()

    /// A new, empty folder named `prefix-<uuid>` under the run's folder.
    static func directory(_ prefix: String) -> URL {
        let directory = root.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    private final class RemoveWhenFinished: NSObject, XCTestObservation {
        let root: URL
        init(_ root: URL) { self.root = root }
        func testBundleDidFinish(_ testBundle: Bundle) {
            try? FileManager.default.removeItem(at: root)
        }
    }
}

extension SSEEvent {
    /// Whether the event came with its own `id:` (every event but the provisional `tail_html`).
    var isLogged: Bool { type != "tail_html" }
}

/// What one connection to an event stream received.
struct StreamRead: Sendable {
    let status: Int
    let headers: [String: String]
    let events: [SSEEvent]
    let raw: String

    func data(_ event: SSEEvent) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(event.data.utf8))) as? [String: Any] ?? [:]
    }

    var done: [String: Any]? { events.last { $0.type == "done" }.map(data) }

    /// Text-mode reconstruction: the snapshot's content followed by every delta.
    var text: String { appended(snapshotField: "content", event: "delta") }

    /// The reasoning as a client rebuilds it: the snapshot's, then every `reasoning` event appended.
    var reasoning: String { appended(snapshotField: "reasoning", event: "reasoning") }

    /// A snapshot field, replaced by each snapshot and extended by each `event`'s `text`.
    private func appended(snapshotField field: String, event name: String) -> String {
        var result = ""
        for event in events {
            if event.type == "snapshot" {
                result = data(event)[field] as? String ?? ""
            } else if event.type == name {
                result += data(event)["text"] as? String ?? ""
            }
        }
        return result
    }

    /// HTML-mode reconstruction, as the page does it: blocks by index, patches, then the tail.
    var page: (blocks: [String], tail: String) {
        var blocks: [String] = []
        var tail = ""
        for event in events {
            let fields = data(event)
            switch event.type {
            case "snapshot":
                blocks = fields["blocks"] as? [String] ?? []
                tail = fields["tail"] as? String ?? ""
            case "block":
                let index = fields["index"] as? Int ?? -1
                let html = fields["html"] as? String ?? ""
                if index == blocks.count { blocks.append(html) } else if index >= 0, index < blocks.count { blocks[index] = html }
                else { blocks.append("<!-- gap at \(index) -->" + html) }
            case "tail":
                tail = fields["text"] as? String ?? ""
            case "tail_append":
                tail += fields["text"] as? String ?? ""
            case "done":
                for patch in fields["patch"] as? [[String: Any]] ?? [] {
                    if let index = patch["index"] as? Int, index < blocks.count {
                        blocks[index] = patch["html"] as? String ?? ""
                    }
                }
                tail = ""
            default: break
            }
        }
        return (blocks, tail)
    }

    /// The events that move a client's Last-Event-ID: all but the provisional `tail_html`, which is
    /// sent without an `id:` (an EventSource keeps the previous id for it).
    var logged: [SSEEvent] { events.filter(\.isLogged) }

    var lastID: Int64? { logged.last.flatMap { Int64($0.id) } }
}

/// Runs blocking work (libcurl easy calls) on a thread of its own and awaits it, so tests never
/// block the few threads of the Swift concurrency pool the server itself needs.
enum Blocking {
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try work() })
            }
        }
    }
}
