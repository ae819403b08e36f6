import ParleyPrimitives

/// One surface as the messages so far made it: its catalog, its components (checked), its data
/// model, whether its tree has been shown (`live`: a complete tree with `root` was sent) and the
/// messages held back until then. A value: the board tries a message on a copy and keeps it only
/// when it is valid, so a refused message changes nothing.
public struct SurfaceState: Sendable {
    public let catalogID: String
    var components: [String: ComponentChecker.Checked] = [:]
    public internal(set) var dataModel: JSON = .object([:])
    /// True once `deleteSurface` ended it.
    public internal(set) var deleted = false
    /// True once its tree was complete and sent: later messages go out at once.
    public internal(set) var live = false
    /// Valid messages not sent yet (the surface has no complete tree yet).
    var held: [A2UIMessage] = []

    init(catalogID: String) {
        self.catalogID = catalogID
    }

    /// The ids of its components.
    public var componentIDs: Set<String> { Set(components.keys) }

    /// The component ids each component names, for `SurfaceTree`.
    var references: [String: [String]] { components.mapValues(\.references) }

    /// Whether every Image's bound URL (after this data model) is one of the caller's files. A relative
    /// binding (inside a template) is checked against every item of every list in the model: a
    /// conservative reading, since which list a template repeats over is the page's to resolve; `.` (the
    /// item itself) against every item that is not a list or an object (which the page never draws as an
    /// image). The items are gathered once per call; `answers` keeps what the store said of each URL.
    /// Nothing is checked under `ImagePolicy.trusted`.
    func imageFault(_ images: ImagePolicy, answers: inout ImagePolicy.Answers) -> String? {
        guard !images.isTrusted else { return nil }
        var items: [JSON]?
        for checked in components.values.sorted(by: { $0.id < $1.id }) {
            guard let pointer = checked.imageBinding else { continue }
            let values: [JSON?]
            if pointer.isRelative {
                let all = items ?? Self.items(of: dataModel)
                items = all
                values = pointer.tokens.isEmpty ? all.filter { $0.objectValue == nil && $0.arrayValue == nil }
                                                : all.map { pointer.resolve(in: $0) }
            } else {
                values = [pointer.resolve(in: dataModel)]
            }
            for value in values {
                if let fault = images.fault(ofBound: value, answers: &answers) {
                    return "component '\(checked.id)' (Image): \(fault)"
                }
            }
        }
        return nil
    }

    /// Every item of every array in `value` (iteratively).
    private static func items(of value: JSON) -> [JSON] {
        var found: [JSON] = []
        var pending = [value]
        while let next = pending.popLast() {
            switch next {
            case .array(let items):
                found += items
                pending += items
            case .object(let fields):
                pending += fields.values
            default:
                break
            }
        }
        return found
    }
}
