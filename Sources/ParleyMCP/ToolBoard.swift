import Synchronization

/// Every server's availability and last known tools, written by the connections and read without
/// waiting by `MCPServers.tools()`. Each change bumps `version` and is told on `changes`.
/// Thread-safe (one mutex, held only to copy).
final class ToolBoard: Sendable {
    private let state: Mutex<(servers: [String: MCPServerTools], version: Int)>
    private let continuation: AsyncStream<Int>.Continuation
    let changes: AsyncStream<Int>

    init(servers: [String]) {
        var initial: [String: MCPServerTools] = [:]
        for name in servers { initial[name] = MCPServerTools(server: name, available: false, tools: []) }
        state = Mutex((initial, 0))
        (changes, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .bufferingNewest(1))
    }

    var version: Int { state.withLock { $0.version } }

    var all: [MCPServerTools] {
        state.withLock { $0.servers.values.sorted { $0.server < $1.server } }
    }

    func entry(_ server: String) -> MCPServerTools? { state.withLock { $0.servers[server] } }

    /// Sets what is given; tells `changes` only when something differs.
    func update(_ server: String, available: Bool? = nil, tools: [MCPTool]? = nil) {
        let version: Int? = state.withLock { state in
            guard var entry = state.servers[server] else { return nil }
            let before = entry
            if let available { entry.available = available }
            if let tools { entry.tools = tools }
            guard entry != before else { return nil }
            state.servers[server] = entry
            state.version += 1
            return state.version
        }
        if let version { continuation.yield(version) }
    }

    func finish() { continuation.finish() }
}
