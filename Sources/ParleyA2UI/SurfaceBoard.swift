import ParleyPrimitives

/// Every surface of a branch, as the fold of its A2UI messages in order, and the judge of the next
/// message: valid messages are applied and come out to be sent and stored (`emitted`), a surface's
/// messages are held until its tree is complete (A2UI's rule: buffer until `root` exists, so the page
/// never shows half a tree), and an invalid message is refused with why, changing nothing.
public struct SurfaceBoard: Sendable {
    /// What became of one message.
    public enum Outcome: Sendable, Equatable {
        /// These messages (held ones first, then this one) are valid and go out now, in order.
        case emitted([A2UIMessage])
        /// Valid, held until its surface has a complete tree.
        case held
        case refused(SurfaceError)
    }

    public let limits: SurfaceLimits
    let images: ImagePolicy
    public private(set) var surfaces: [String: SurfaceState] = [:]
    /// What the store said of each image URL asked about, for the board's life (one reply).
    private var imageAnswers = ImagePolicy.Answers()

    /// - Parameter history: the messages already stored on the branch, in order (folded without asking
    ///   about files again: they were checked when they were drawn).
    public init(limits: SurfaceLimits, images: ImagePolicy, history: [JSON] = []) {
        self.limits = limits
        self.images = images
        for message in history { _ = apply(message, images: .trusted) }
    }

    /// The surface `id` on this branch, nil when it was never created.
    public func surface(_ id: String) -> SurfaceState? { surfaces[id] }

    public mutating func apply(_ json: JSON) -> Outcome {
        apply(json, images: images)
    }

    /// Ends the messages of this call: surfaces whose tree never became complete are dropped (nothing
    /// of them was sent); returns why, one error each.
    public mutating func finish() -> [SurfaceError] {
        var errors: [SurfaceError] = []
        for (id, surface) in surfaces.sorted(by: { $0.key < $1.key }) where !surface.live && !surface.deleted {
            let reason: String
            switch SurfaceTree.judge(surface.references, maxDepth: limits.maxDepth) {
            case .incomplete(let why), .invalid(let why): reason = why
            case .complete: reason = "it has no components"
            }
            errors.append(SurfaceError("surface '\(id)' was not drawn: \(reason)", surfaceID: id))
            surfaces[id] = nil
        }
        return errors
    }

    private mutating func apply(_ json: JSON, images: ImagePolicy) -> Outcome {
        do {
            return try applying(try A2UIMessage(json), images: images)
        } catch {
            return .refused(error)
        }
    }

    private mutating func applying(_ message: A2UIMessage, images: ImagePolicy) throws(SurfaceError) -> Outcome {
        let id = message.surfaceID
        if case .createSurface(let catalogID, let theme) = message.kind {
            if let existing = surfaces[id], !existing.deleted {
                throw SurfaceError("surface '\(id)' exists already (delete it first, or update it)", surfaceID: id)
            }
            guard BasicCatalog.ids.contains(catalogID) else {
                throw SurfaceError("catalog '\(catalogID.prefix(100))' is not accepted; use \(BasicCatalog.ids.sorted().last ?? "")",
                                   surfaceID: id)
            }
            if let icon = theme?["iconUrl"] {
                if let fault = images.fault(ofBound: icon) { throw SurfaceError("theme iconUrl: \(fault)", surfaceID: id) }
            }
            var surface = SurfaceState(catalogID: catalogID)
            surface.held = [message]
            surfaces[id] = surface
            return .held
        }
        guard var surface = surfaces[id] else {
            throw SurfaceError("there is no surface '\(id)' (createSurface first)", surfaceID: id)
        }
        guard !surface.deleted else { throw SurfaceError("surface '\(id)' was deleted", surfaceID: id) }
        var complete = surface.live
        switch message.kind {
        case .createSurface:
            return .held
        case .deleteSurface:
            surface.deleted = true
            guard surface.live else {
                surfaces[id] = nil
                return .emitted([])
            }
            surfaces[id] = surface
            return .emitted([message])
        case .updateComponents(let list):
            guard list.count <= limits.maxComponents else {
                throw SurfaceError("a surface holds at most \(limits.maxComponents) components", surfaceID: id)
            }
            let checker = ComponentChecker(images: images, maxSegments: limits.maxDepth)
            for component in list {
                do {
                    let checked = try checker.check(component)
                    surface.components[checked.id] = checked
                } catch {
                    throw SurfaceError(error.message, surfaceID: id)
                }
            }
            guard surface.components.count <= limits.maxComponents else {
                throw SurfaceError("a surface holds at most \(limits.maxComponents) components", surfaceID: id)
            }
            switch SurfaceTree.judge(surface.references, maxDepth: limits.maxDepth) {
            case .invalid(let why):
                throw SurfaceError("surface '\(id)': \(why)", surfaceID: id)
            case .incomplete(let why):
                if surface.live { throw SurfaceError("surface '\(id)': \(why)", surfaceID: id) }
            case .complete:
                complete = true
            }
        case .updateDataModel(let path, let value):
            let pointer = try JSONPointer(path ?? "/", allowRelative: false, maxSegments: limits.maxDepth)
            if let value, let key = Self.refusedKey(in: value) {
                throw SurfaceError("the data model may not use the key '\(key)'", surfaceID: id)
            }
            surface.dataModel = pointer.tokens.isEmpty ? (value ?? .object([:])) : pointer.write(value, into: surface.dataModel)
        }
        if let fault = surface.imageFault(images, answers: &imageAnswers) { throw SurfaceError(fault, surfaceID: id) }
        surface.held.append(message)
        guard complete else {
            surfaces[id] = surface
            return .held
        }
        let out = surface.held
        surface.held = []
        surface.live = true
        surfaces[id] = surface
        return .emitted(out)
    }

    /// Checks one message on its own, without the surface it belongs to (a message read from an imported
    /// file, whose branch is not folded): its shape, the catalog, every component, every path, the data
    /// model's keys and literal image URLs (`images`). Throws what is wrong.
    public static func check(_ json: JSON, images: ImagePolicy) throws(SurfaceError) {
        let message = try A2UIMessage(json)
        switch message.kind {
        case .createSurface(let catalogID, let theme):
            guard BasicCatalog.ids.contains(catalogID) else { throw SurfaceError("catalog '\(catalogID.prefix(100))' is not accepted") }
            if let icon = theme?["iconUrl"], let fault = images.fault(ofBound: icon) { throw SurfaceError("theme iconUrl: \(fault)") }
        case .updateComponents(let list):
            let checker = ComponentChecker(images: images)
            for component in list { _ = try checker.check(component) }
        case .updateDataModel(let path, let value):
            _ = try JSONPointer(path ?? "/", allowRelative: false)
            if let value, let key = refusedKey(in: value) { throw SurfaceError("the data model may not use the key '\(key)'") }
        case .deleteSurface:
            break
        }
    }

    /// The first key of `JSONPointer.refusedKeys` anywhere in `value`.
    private static func refusedKey(in value: JSON) -> String? {
        var pending = [value]
        while let next = pending.popLast() {
            switch next {
            case .object(let fields):
                if let key = fields.keys.first(where: { JSONPointer.refusedKeys.contains($0) }) { return key }
                pending += fields.values
            case .array(let items):
                pending += items
            default:
                break
            }
        }
        return nil
    }
}
