import Foundation
import ParleyServer
import ParleySSE
import ParleyTestSupport
import XCTest

/// A real Parley (the same `ParleyApp` that `parley` runs) on a loopback port, with its SQLite file in
/// a temporary folder. Settings are the environment variables of the README.
final class TestParley: Sendable {
    let directory: URL
    let app: ParleyApp
    let base: String

    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    init(_ settings: [String: String] = [:], directory: URL? = nil) throws {
        let directory = directory ?? TestFiles.directory("parley-test")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory
        var environment = [
            "PARLEY_PORT": "0",
            "PARLEY_DB": directory.appendingPathComponent("parley.db").path,
            "PARLEY_PUBLIC": Self.repositoryRoot.appendingPathComponent("Public").path,
            "PARLEY_DEMO_TOKENS_PER_SECOND": "0",
        ]
        environment.merge(settings) { $1 }
        app = try ParleyApp(configuration: try ParleyConfiguration(environment: environment, arguments: []))
        try app.start()
        base = "http://127.0.0.1:\(app.port)"
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
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:] }
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

    func message(_ id: String) async throws -> [String: Any] {
        let reply = try await call("GET", "/api/messages/\(id)")
        XCTAssertEqual(reply.status, 200, reply.text)
        return reply.json
    }

    // MARK: - Event streams

    /// Reads the message's event stream until `done` (or `until` holds, or the timeout), then closes it.
    /// `attached`, when given, is opened as soon as the first event (the snapshot or the replay) has
    /// arrived: a script waiting on it starts only once this client is subscribed, however long the
    /// connection took (no "sleep long enough for the client to connect").
    func events(_ messageID: String, mode: String? = nil, lastEventID: Int64? = nil,
                attached: FakeUpstream.Gate? = nil,
                until: @escaping @Sendable ([SSEEvent]) -> Bool = { _ in false },
                timeout: TimeInterval = 20) async throws -> StreamRead {
        var path = "/api/messages/\(messageID)/stream"
        if let mode { path += "?mode=\(mode)" }
        let url = base + path
        let headers = lastEventID.map { [("Last-Event-ID", String($0))] } ?? []
        return try await Blocking.run {
            let response = try TestHTTPClient().stream(url, headers: headers, until: { bytes in
                var decoder = SSEDecoder()
                guard let events = try? decoder.decode(bytes) else { return true }
                if let attached, !events.isEmpty { attached.open() }
                return events.contains { $0.type == "done" } || until(events)
            }, timeout: timeout)
            var decoder = SSEDecoder()
            let events = try decoder.decode(response.body)
            return StreamRead(status: response.status, headers: response.headers, events: events,
                              raw: response.text)
        }
    }

    /// Polls the message until it is no longer streaming.
    func finished(_ messageID: String, timeout: Duration = .seconds(20)) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let message = try await message(messageID)
            if message["status"] as? String != "streaming" { return message }
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTFail("message \(messageID) still streaming after \(timeout)")
        return [:]
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

    var lastID: Int64? { events.last.flatMap { Int64($0.id) } }
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
