import Foundation
import ParleyPrimitives

/// Reads the configuration file's JSON into `MCPConfiguration`, field by field, so each fault names
/// its server and field. Values are never quoted in errors (they may be secrets).
struct MCPConfigurationParser {
    /// Longest allowed `timeout` (one day): a larger value is a typo, not a wish.
    static let maxTimeoutSeconds = 86_400.0
    /// The server name reserved for Parley's built-in tools.
    static let reservedName = "parley"
    static let serverKeys: Set<String> = ["type", "url", "headers", "command", "args", "env", "tools",
                                          "approval", "timeout", "members"]

    let environment: [String: String]

    func parse(_ bytes: [UInt8]) throws(MCPConfigurationError) -> MCPConfiguration {
        guard let root = JSON(parsing: bytes) else { throw MCPConfigurationError(reason: "the file is not valid JSON") }
        guard let fields = root.objectValue else { throw MCPConfigurationError(reason: "the file must hold a JSON object") }
        for key in fields.keys.sorted() where key != "mcpServers" && key != "servers" {
            throw MCPConfigurationError(field: key, reason: "is not a known key (expected 'mcpServers')")
        }
        if fields["mcpServers"] != nil && fields["servers"] != nil {
            throw MCPConfigurationError(reason: "the file has both 'mcpServers' and 'servers': keep one")
        }
        let key = fields["servers"] != nil ? "servers" : "mcpServers"
        guard let entries = fields[key] else { return MCPConfiguration(servers: []) }
        guard let servers = entries.objectValue else { throw MCPConfigurationError(field: key, reason: "must be an object of servers by name") }
        var parsed: [MCPServerConfiguration] = []
        for name in servers.keys.sorted() {
            parsed.append(try server(name: name, servers[name] ?? .null))
        }
        return MCPConfiguration(servers: parsed)
    }

    private func server(name: String, _ value: JSON) throws(MCPConfigurationError) -> MCPServerConfiguration {
        func fault(_ field: String?, _ reason: String) -> MCPConfigurationError {
            MCPConfigurationError(server: name, field: field, reason: reason)
        }
        let allowed = name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.nameCharacters.contains($0)) }
        guard !name.isEmpty, allowed else {
            throw MCPConfigurationError(server: name, reason: "the name must be letters, digits, '_' or '-' only (it prefixes tool ids)")
        }
        guard name != Self.reservedName else { throw fault(nil, "the name 'parley' is reserved for Parley's built-in tools") }
        guard let fields = value.objectValue else { throw fault(nil, "must be an object") }
        for key in fields.keys.sorted() where !Self.serverKeys.contains(key) {
            throw fault(key, "is not a known key")
        }
        let transport = try self.transport(fields, fault: fault)
        var configuration = MCPServerConfiguration(name: name, transport: transport)
        if let tools = fields["tools"] {
            let names = tools.arrayValue?.compactMap(\.stringValue) ?? []
            guard let items = tools.arrayValue, names.count == items.count, names.allSatisfy({ !$0.isEmpty }) else {
                throw fault("tools", "must be an array of tool names")
            }
            configuration.allowedTools = names
        }
        if let approval = fields["approval"] {
            guard let text = approval.stringValue, let value = MCPApproval(rawValue: text) else {
                throw fault("approval", "must be \"always\", \"never\" or \"auto\"")
            }
            configuration.approval = value
        }
        if let timeout = fields["timeout"] {
            guard let seconds = timeout.doubleValue, seconds > 0, seconds <= Self.maxTimeoutSeconds else {
                throw fault("timeout", "must be a positive number of seconds (at most \(Int(Self.maxTimeoutSeconds)))")
            }
            configuration.timeout = .milliseconds(Int64((seconds * 1000).rounded(.up)))
        }
        if let members = fields["members"] {
            guard let flag = members.boolValue else { throw fault("members", "must be true or false") }
            configuration.membersAllowed = flag
        }
        return configuration
    }

    private func transport(_ fields: [String: JSON],
                           fault: (String?, String) -> MCPConfigurationError) throws(MCPConfigurationError) -> MCPServerConfiguration.Transport {
        let url = fields["url"], command = fields["command"]
        if url != nil && command != nil { throw fault(nil, "has both 'url' and 'command': give exactly one") }
        if let type = fields["type"] {
            let expected = url != nil ? ["http", "streamable-http", "streamableHttp"] : ["stdio"]
            guard let text = type.stringValue, expected.contains(text) else {
                throw fault("type", url != nil ? "must be \"http\" with 'url' (only Streamable HTTP is supported)"
                                                : "must be \"stdio\" with 'command'")
            }
        }
        if let url {
            for key in ["args", "env"] where fields[key] != nil { throw fault(key, "is for 'command' servers, not 'url' ones") }
            guard let text = url.stringValue else { throw fault("url", "must be a string") }
            let expanded = try expand(text, field: "url", fault: fault)
            guard expanded.hasPrefix("http://") || expanded.hasPrefix("https://"), expanded.count > 8 else {
                throw fault("url", "must be an http:// or https:// URL")
            }
            var headers: [String: String] = [:]
            if let value = fields["headers"] {
                guard let object = value.objectValue else { throw fault("headers", "must be an object of header names and values") }
                for name in object.keys.sorted() {
                    let field = "headers.\(name)"
                    guard !name.isEmpty, name.unicodeScalars.allSatisfy({ CharacterSet.tokenCharacters.contains($0) }) else {
                        throw fault(field, "is not a valid header name")
                    }
                    guard let text = object[name]?.stringValue else { throw fault(field, "must be a string") }
                    let expanded = try expand(text, field: field, fault: fault)
                    guard !expanded.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
                        throw fault(field, "must not contain line breaks")
                    }
                    headers[name] = expanded
                }
            }
            return .http(url: expanded, headers: headers)
        }
        guard let command else { throw fault(nil, "needs 'url' (Streamable HTTP) or 'command' (stdio)") }
        if fields["headers"] != nil { throw fault("headers", "is for 'url' servers, not 'command' ones") }
        guard let text = command.stringValue, !text.isEmpty else { throw fault("command", "must be a non-empty string") }
        let program = try expand(text, field: "command", fault: fault)
        var arguments: [String] = []
        if let value = fields["args"] {
            guard let items = value.arrayValue else { throw fault("args", "must be an array of strings") }
            for (index, item) in items.enumerated() {
                guard let text = item.stringValue else { throw fault("args[\(index)]", "must be a string") }
                arguments.append(try expand(text, field: "args[\(index)]", fault: fault))
            }
        }
        var environment: [String: String] = [:]
        if let value = fields["env"] {
            guard let object = value.objectValue else { throw fault("env", "must be an object of variable names and values") }
            for name in object.keys.sorted() {
                let field = "env.\(name)"
                guard !name.isEmpty, !name.contains("="), !name.contains("\0") else { throw fault(field, "is not a valid variable name") }
                guard let text = object[name]?.stringValue else { throw fault(field, "must be a string") }
                environment[name] = try expand(text, field: field, fault: fault)
            }
        }
        return .stdio(command: program, arguments: arguments, environment: environment)
    }

    /// Replaces each `${VAR}` (or VS Code's `${env:VAR}`) with the environment's value. A `$` not followed
    /// by `{` stays as it is.
    func expand(_ text: String, field: String,
                fault: (String?, String) -> MCPConfigurationError) throws(MCPConfigurationError) -> String {
        guard text.contains("${") else { return text }
        var result = ""
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            result += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else { throw fault(field, "has '${' without a closing '}'") }
            var name = String(rest[start.upperBound..<end])
            if name.hasPrefix("env:") { name.removeFirst(4) }
            guard !name.isEmpty, name.unicodeScalars.allSatisfy({ CharacterSet.nameCharacters.contains($0) && $0 != "-" }) else {
                throw fault(field, "has an invalid variable reference (expected ${NAME})")
            }
            guard let value = environment[name] else { throw fault(field, "uses ${\(name)}, which is not set in the environment") }
            result += value
            rest = rest[rest.index(after: end)...]
        }
        return result + rest
    }
}

extension CharacterSet {
    /// Server names and variable names: ASCII letters, digits, `_` and `-`.
    static let nameCharacters = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
    /// RFC 9110 token characters (header names).
    static let tokenCharacters = CharacterSet(charactersIn: "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
}
