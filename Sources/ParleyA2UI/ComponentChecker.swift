import ParleyPrimitives

/// Checks one component of an `updateComponents` against the catalog (`BasicCatalog`): a known,
/// accepted component, its required properties, no property the catalog does not define, each value of
/// the kind its property takes, every binding a valid `JSONPointer`, `openUrl` only with an https: URL,
/// an Image URL that is one of the caller's files (a literal one here; a bound one once the data model is
/// known, `ImagePolicy`). Returns what the tree needs of it.
struct ComponentChecker {
    /// What a valid component tells the surface.
    struct Checked: Sendable, Equatable {
        let id: String
        let type: String
        /// The component ids it names (children, child, tabs, trigger, content, a template).
        let references: [String]
        /// An Image's `url` binding, checked against the data model by the surface.
        let imageBinding: JSONPointer?
    }

    let images: ImagePolicy
    /// Segments a binding's path may have (the surface's depth limit).
    var maxSegments = SurfaceLimits().maxDepth

    func check(_ component: JSON) throws(SurfaceError) -> Checked {
        guard let fields = component.objectValue else { throw SurfaceError("a component must be a JSON object") }
        guard let id = fields["id"]?.stringValue, !id.isEmpty else {
            throw SurfaceError("a component needs a non-empty string 'id'")
        }
        guard let type = fields["component"]?.stringValue else {
            throw SurfaceError("component '\(id)' needs a string 'component' (its type)")
        }
        if BasicCatalog.refused.contains(type) {
            throw SurfaceError("component '\(id)': \(type) is not accepted by Parley (no Video or AudioPlayer)")
        }
        guard let spec = BasicCatalog.components[type] else {
            throw SurfaceError("component '\(id)': '\(type.prefix(60))' is not a component of the basic catalog")
        }
        for name in spec.required.sorted() where fields[name] == nil {
            throw SurfaceError("component '\(id)' (\(type)) needs '\(name)'")
        }
        var references: [String] = []
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) where name != "id" && name != "component" {
            guard let kind = spec.properties[name] else {
                throw SurfaceError("component '\(id)' (\(type)) has no property '\(name.prefix(60))'")
            }
            do {
                try check(value, as: kind)
            } catch {
                throw SurfaceError("component '\(id)' (\(type)) '\(name)': \(error.message)")
            }
            references += ComponentSpec.references(kind, value)
        }
        if type == "TextField", let pattern = fields["validationRegexp"]?.stringValue, let fault = Self.patternFault(pattern) {
            throw SurfaceError("component '\(id)' (TextField) 'validationRegexp': \(fault)")
        }
        var imageBinding: JSONPointer?
        if type == "Image", let url = fields["url"] {
            if let literal = url.stringValue {
                if let fault = images.fault(of: literal) { throw SurfaceError("component '\(id)' (Image): \(fault)") }
            } else if let path = url["path"]?.stringValue {
                imageBinding = try JSONPointer(path, maxSegments: maxSegments)
            } else {
                throw SurfaceError("component '\(id)' (Image): 'url' must be a literal or a path binding, not a function call")
            }
        }
        return Checked(id: id, type: type, references: references, imageBinding: imageBinding)
    }

    private func check(_ value: JSON, as kind: ComponentSpec.Kind) throws(SurfaceError) {
        switch kind {
        case .dynamicString: try dynamic(value) { $0.stringValue != nil }
        case .dynamicNumber: try dynamic(value) { $0.doubleValue != nil }
        case .dynamicBoolean: try dynamic(value) { $0.boolValue != nil }
        case .dynamicStringList: try dynamic(value) { $0.arrayValue?.allSatisfy { $0.stringValue != nil } ?? false }
        case .child:
            guard value.stringValue != nil else { throw SurfaceError("must be a component id (a string)") }
        case .children:
            if let items = value.arrayValue {
                guard items.allSatisfy({ $0.stringValue != nil }) else { throw SurfaceError("must list component ids") }
            } else {
                guard let template = value.objectValue, template.count == 2, template["componentId"]?.stringValue != nil,
                      let path = template["path"]?.stringValue else {
                    throw SurfaceError("must be an array of ids or {\"componentId\",\"path\"}")
                }
                _ = try JSONPointer(path, maxSegments: maxSegments)
            }
        case .action: try action(value)
        case .text(let allowed):
            guard let text = value.stringValue else { throw SurfaceError("must be a string") }
            if let allowed, !allowed.contains(text) {
                throw SurfaceError("must be one of \(allowed.joined(separator: ", "))")
            }
        case .number:
            guard value.doubleValue != nil else { throw SurfaceError("must be a number") }
        case .boolean:
            guard value.boolValue != nil else { throw SurfaceError("must be a boolean") }
        case .tabs:
            try list(value, fields: ["title": .dynamicString, "child": .child], required: ["title", "child"], minimum: 1)
        case .options:
            try list(value, fields: ["label": .dynamicString, "value": .text(allowed: nil)], required: ["label", "value"])
        case .checks:
            try list(value, fields: ["condition": .dynamicBoolean, "message": .text(allowed: nil)],
                     required: ["condition", "message"])
        case .iconName:
            if let name = value.stringValue {
                guard BasicCatalog.icons.contains(name) else { throw SurfaceError("'\(name.prefix(60))' is not a catalog icon") }
            } else if let svg = value.objectValue, svg.count == 1, svg["svgPath"]?.stringValue != nil {
                return
            } else {
                try binding(value)
            }
        case .accessibility:
            try object(value, fields: ["label": .dynamicString, "description": .dynamicString], required: [])
        }
    }

    /// A literal the `literal` test accepts, a `{"path"}` binding, or a catalog function call.
    private func dynamic(_ value: JSON, literal: (JSON) -> Bool) throws(SurfaceError) {
        if literal(value) { return }
        guard let fields = value.objectValue else { throw SurfaceError("has the wrong type") }
        if fields["call"] != nil { return try functionCall(value) }
        try binding(value)
    }

    private func binding(_ value: JSON) throws(SurfaceError) {
        guard let fields = value.objectValue, fields.count == 1, let path = fields["path"]?.stringValue else {
            throw SurfaceError("must be a literal, {\"path\"} or a function call")
        }
        _ = try JSONPointer(path, maxSegments: maxSegments)
    }

    private func functionCall(_ value: JSON) throws(SurfaceError) {
        guard let fields = value.objectValue, let name = fields["call"]?.stringValue else {
            throw SurfaceError("a function call needs a string 'call'")
        }
        guard BasicCatalog.functions.contains(name) else {
            throw SurfaceError("'\(name.prefix(60))' is not a function of the basic catalog")
        }
        if let unknown = fields.keys.first(where: { !["call", "args", "returnType"].contains($0) }) {
            throw SurfaceError("a function call has no field '\(unknown.prefix(60))'")
        }
        let args = fields["args"] ?? .object([:])
        guard let arguments = args.objectValue else { throw SurfaceError("a function call's 'args' must be an object") }
        if name == "openUrl" {
            guard arguments.count == 1, let url = arguments["url"]?.stringValue else {
                throw SurfaceError("openUrl takes one literal string 'url'")
            }
            guard Self.isHTTPS(url) else { throw SurfaceError("openUrl only opens https: URLs") }
        }
        if name == "regex" { try regex(arguments["pattern"]) }
        try paths(in: args)
    }

    private func action(_ value: JSON) throws(SurfaceError) {
        guard let fields = value.objectValue, fields.count == 1 else {
            throw SurfaceError("must be {\"event\":{…}} or {\"functionCall\":{…}}")
        }
        if let call = fields["functionCall"] { return try functionCall(call) }
        guard let event = fields["event"]?.objectValue, event["name"]?.stringValue != nil,
              event.keys.allSatisfy({ $0 == "name" || $0 == "context" }) else {
            throw SurfaceError("an event needs a string 'name' and may have a 'context' object")
        }
        if let context = event["context"] {
            guard context.objectValue != nil else { throw SurfaceError("an event's 'context' must be an object") }
            try paths(in: context)
        }
    }

    /// Every `{"path"}` binding and nested function call inside a free-form value (arguments, contexts).
    private func paths(in value: JSON) throws(SurfaceError) {
        switch value {
        case .object(let fields):
            if fields["call"] != nil { try functionCallShallow(value) }
            if let path = fields["path"]?.stringValue { _ = try JSONPointer(path, maxSegments: maxSegments) }
            for (_, item) in fields { try paths(in: item) }
        case .array(let items):
            for item in items { try paths(in: item) }
        default:
            break
        }
    }

    private func functionCallShallow(_ value: JSON) throws(SurfaceError) {
        guard let name = value["call"]?.stringValue, BasicCatalog.functions.contains(name) else {
            throw SurfaceError("'\(value["call"]?.stringValue?.prefix(60) ?? "?")' is not a function of the basic catalog")
        }
        if name == "openUrl" {
            guard let url = value["args"]?["url"]?.stringValue, Self.isHTTPS(url) else {
                throw SurfaceError("openUrl only opens https: URLs")
            }
        }
        if name == "regex" { try regex(value["args"]?["pattern"]) }
    }

    /// regex's `pattern`: a literal (a bound one would let the data model choose it) that `patternFault` passes.
    private func regex(_ pattern: JSON?) throws(SurfaceError) {
        guard let text = pattern?.stringValue else { throw SurfaceError("regex takes a literal string 'pattern'") }
        if let fault = Self.patternFault(text) { throw SurfaceError("regex: \(fault)") }
    }

    /// Longest pattern accepted (characters).
    static let maxPatternLength = 256

    /// Why a pattern could make the page's `RegExp` backtrack for ever (a quantified group such as `(a+)+`,
    /// a backreference), or is longer than `maxPatternLength`; nil when it is accepted. Every page tests
    /// a surface's patterns, so the server refuses the forms that can take exponential time.
    static func patternFault(_ pattern: String) -> String? {
        guard pattern.count <= maxPatternLength else { return "a pattern is at most \(maxPatternLength) characters" }
        let characters = Array(pattern)
        var index = 0
        var inClass = false
        while index < characters.count {
            let character = characters[index]
            let next = index + 1 < characters.count ? characters[index + 1] : nil
            if character == "\\" {
                if let next, !inClass, ("1"..."9").contains(next) || next == "k" {
                    return "a pattern may not use backreferences"
                }
                index += 2
                continue
            }
            if inClass {
                if character == "]" { inClass = false }
            } else if character == "[" {
                inClass = true
            } else if character == ")", let next, "*+?{".contains(next) {
                return "a pattern may not quantify a group (such as '(a+)+'), which can backtrack for ever"
            }
            index += 1
        }
        return nil
    }

    private func list(_ value: JSON, fields: [String: ComponentSpec.Kind], required: Set<String>,
                      minimum: Int = 0) throws(SurfaceError) {
        guard let items = value.arrayValue, items.count >= minimum else { throw SurfaceError("must be an array") }
        for item in items { try object(item, fields: fields, required: required) }
    }

    private func object(_ value: JSON, fields: [String: ComponentSpec.Kind], required: Set<String>) throws(SurfaceError) {
        guard let object = value.objectValue else { throw SurfaceError("must be an object") }
        for name in required where object[name] == nil { throw SurfaceError("needs '\(name)'") }
        for (name, item) in object {
            guard let kind = fields[name] else { throw SurfaceError("has no field '\(name.prefix(60))'") }
            try check(item, as: kind)
        }
    }

    static func isHTTPS(_ url: String) -> Bool {
        url.lowercased().hasPrefix("https://") && !url.unicodeScalars.contains { $0.value < 0x21 || $0.value == 0x7F }
    }
}
