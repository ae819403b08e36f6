import ParleyPrimitives

/// One agent-to-client A2UI v0.9 message, read from the JSON a model wrote. Only the shape is checked
/// here (the envelope, `"version":"v0.9"`, one known message type, required fields, no unknown keys, as
/// `server_to_client.json` says); what the components mean is `SurfaceState`'s.
public struct A2UIMessage: Sendable, Equatable {
    public static let version = "v0.9"

    public enum Kind: Sendable, Equatable {
        case createSurface(catalogID: String, theme: JSON?)
        case updateComponents([JSON])
        /// `path` nil or "/" is the whole model; `value` nil removes what is at `path`.
        case updateDataModel(path: String?, value: JSON?)
        case deleteSurface
    }

    public let surfaceID: String
    public let kind: Kind
    /// The message as written (what is stored and sent, unchanged).
    public let json: JSON

    /// Reads a message; throws what is wrong with its shape.
    public init(_ json: JSON) throws(SurfaceError) {
        guard let fields = json.objectValue else { throw SurfaceError("a message must be a JSON object") }
        guard fields["version"]?.stringValue == Self.version else {
            throw SurfaceError("a message must carry \"version\":\"v0.9\"")
        }
        let types = fields.keys.filter { $0 != "version" }
        guard types.count == 1, let type = types.first, let body = fields[type]?.objectValue else {
            throw SurfaceError("a message must hold exactly one of createSurface, updateComponents, updateDataModel, deleteSurface (an object)")
        }
        guard let surfaceID = body["surfaceId"]?.stringValue, !surfaceID.isEmpty else {
            throw SurfaceError("\(type) needs a non-empty string 'surfaceId'")
        }
        self.surfaceID = surfaceID
        self.json = json
        switch type {
        case "createSurface":
            try Self.allow(body, ["surfaceId", "catalogId", "theme", "sendDataModel"], in: type)
            guard let catalog = body["catalogId"]?.stringValue else {
                throw SurfaceError("createSurface needs a string 'catalogId'", surfaceID: surfaceID)
            }
            if let theme = body["theme"], theme.objectValue == nil {
                throw SurfaceError("createSurface's 'theme' must be an object", surfaceID: surfaceID)
            }
            if let flag = body["sendDataModel"], flag.boolValue == nil {
                throw SurfaceError("createSurface's 'sendDataModel' must be a boolean", surfaceID: surfaceID)
            }
            kind = .createSurface(catalogID: catalog, theme: body["theme"])
        case "updateComponents":
            try Self.allow(body, ["surfaceId", "components"], in: type)
            guard let components = body["components"]?.arrayValue, !components.isEmpty else {
                throw SurfaceError("updateComponents needs a non-empty array 'components'", surfaceID: surfaceID)
            }
            kind = .updateComponents(components)
        case "updateDataModel":
            try Self.allow(body, ["surfaceId", "path", "value"], in: type)
            if let path = body["path"], path.stringValue == nil {
                throw SurfaceError("updateDataModel's 'path' must be a string", surfaceID: surfaceID)
            }
            kind = .updateDataModel(path: body["path"]?.stringValue, value: body["value"])
        case "deleteSurface":
            try Self.allow(body, ["surfaceId"], in: type)
            kind = .deleteSurface
        default:
            throw SurfaceError("unknown message type '\(type)' (v0.9 has createSurface, updateComponents, updateDataModel, deleteSurface)",
                               surfaceID: surfaceID)
        }
    }

    private static func allow(_ body: [String: JSON], _ keys: Set<String>, in type: String) throws(SurfaceError) {
        if let unknown = body.keys.sorted().first(where: { !keys.contains($0) }) {
            throw SurfaceError("\(type) has no field '\(unknown)'", surfaceID: body["surfaceId"]?.stringValue)
        }
    }
}
