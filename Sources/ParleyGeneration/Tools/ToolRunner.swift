import ParleyPrimitives
import ParleyProviders
import ParleyStore

/// Where a reply's tools come from and how they run. Why a protocol: the generation runs the turn loop
/// (stream, collect calls, ask, run, answer) without knowing MCP, the built-in tools or who may use
/// what; `ParleyTools` implements it over the MCP servers and the store.
///
/// Concurrency: called from `Generations` (the toolbox, at a reply's start) and from a reply's own
/// task (runs, several at once for parallel calls).
public protocol ToolRunner: Sendable {
    /// The tools of `enabled` (tool ids and `<server>/*`) that `owner` may use now, as the model sees
    /// them, with whether each asks for approval (the server's policy and the owner's "always allow").
    func toolbox(enabled: [String], owner: String) async -> Toolbox

    /// Runs one call. Never throws: a failure is a result with `isError`. Cancelling the calling task
    /// cancels the call at its server and returns promptly.
    func run(tool: String, arguments: JSON, owner: String) async -> ToolCallResult
}

/// The tools one reply may call, by the function name the provider sees.
public struct Toolbox: Sendable {
    /// One callable tool.
    public struct Tool: Sendable, Equatable {
        /// Parley's id, `<server>/<tool>`.
        public var id: String
        /// What the provider sees (its `name` is the function name, mapped back exactly).
        public var spec: ToolSpec
        public var needsApproval: Bool

        public init(id: String, spec: ToolSpec, needsApproval: Bool) {
            self.id = id
            self.spec = spec
            self.needsApproval = needsApproval
        }
    }

    /// Who runs the calls: Parley (a conversation's tools), or the API client (`/v1` tools, relayed
    /// and never run: the reply ends with `tool_calls`).
    public enum Runner: Sendable {
        case server
        case client
    }

    public var tools: [Tool]
    public var runner: Runner

    public init(tools: [Tool], runner: Runner = .server) {
        self.tools = tools
        self.runner = runner
    }

    /// No tools: the provider is sent none.
    public static let none = Toolbox(tools: [])

    public var isEmpty: Bool { tools.isEmpty }

    /// The tool a function name stands for, nil for a name the model made up.
    public func tool(named name: String) -> Tool? {
        tools.first { $0.spec.name == name }
    }
}
