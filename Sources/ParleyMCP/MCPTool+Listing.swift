import ParleyPrimitives

extension MCPTool {
    /// A tool from one `tools/list` entry; nil without a name.
    init?(server: String, listed entry: JSON) {
        guard let name = entry["name"]?.stringValue, !name.isEmpty else { return nil }
        let annotations = entry["annotations"]
        var schema = entry["inputSchema"] ?? .object(["type": .string("object")])
        if schema.objectValue == nil { schema = .object(["type": .string("object")]) }
        self.init(server: server, name: name,
                  title: entry["title"]?.stringValue ?? annotations?["title"]?.stringValue,
                  description: entry["description"]?.stringValue,
                  inputSchema: schema,
                  outputSchema: entry["outputSchema"].flatMap { $0.objectValue == nil ? nil : $0 },
                  readOnlyHint: annotations?["readOnlyHint"]?.boolValue,
                  destructiveHint: annotations?["destructiveHint"]?.boolValue)
    }
}
