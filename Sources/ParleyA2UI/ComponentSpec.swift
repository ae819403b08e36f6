import ParleyPrimitives

/// One component of a catalog as data: its properties, what each may hold, and which are required. Why
/// data rather than code per component: the validator, the tool's description and the tests read the
/// same table, and the catalog's JSON schema maps onto it line by line.
public struct ComponentSpec: Sendable {
    /// What a property may hold (the v0.9 `common_types.json` definitions the basic catalog uses).
    public enum Kind: Sendable, Equatable {
        /// A literal string, a `{"path"}` binding, or a function call.
        case dynamicString
        case dynamicNumber
        case dynamicBoolean
        case dynamicStringList
        /// The id of one child component.
        case child
        /// Child ids, or a template `{"componentId","path"}` repeated over a data list.
        case children
        /// `{"event":{"name","context"?}}` or `{"functionCall":{…}}`.
        case action
        /// A plain string, one of `allowed` when given.
        case text(allowed: [String]?)
        case number
        case boolean
        /// Tabs' `[{"title","child"}]`.
        case tabs
        /// ChoicePicker's `[{"label","value"}]`.
        case options
        /// Checkable's `[{"condition","message"}]`.
        case checks
        /// Icon's name: a catalog icon name, `{"svgPath"}` or a binding.
        case iconName
        /// `{"label"?,"description"?}` of dynamic strings.
        case accessibility
    }

    public let name: String
    public let properties: [String: Kind]
    public let required: Set<String>

    public init(_ name: String, _ properties: [String: Kind], required: Set<String>, checkable: Bool = false) {
        self.name = name
        var all = properties
        all["accessibility"] = .accessibility
        all["weight"] = .number
        if checkable { all["checks"] = .checks }
        self.properties = all
        self.required = required
    }

    /// The component ids a property of this kind names (for the tree), from its value.
    static func references(_ kind: Kind, _ value: JSON) -> [String] {
        switch kind {
        case .child:
            return value.stringValue.map { [$0] } ?? []
        case .children:
            if let items = value.arrayValue { return items.compactMap(\.stringValue) }
            return value["componentId"]?.stringValue.map { [$0] } ?? []
        case .tabs:
            return (value.arrayValue ?? []).compactMap { $0["child"]?.stringValue }
        default:
            return []
        }
    }
}
