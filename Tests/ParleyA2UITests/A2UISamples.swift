import ParleyA2UI
import ParleyPrimitives

/// Surfaces the A2UI tests share: a form with every kind of binding, and builders for hostile ones.
enum A2UISamples {
    static let catalog = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
    static let oldCatalog = "https://a2ui.org/specification/v0_9/basic_catalog.json"

    /// The arguments of a render_ui call drawing a small form (createSurface, two updateComponents, a data
    /// model), written the way a model would (spaces, escapes, non-ASCII text, numbers of every form).
    static let formArguments = #"""
    {"messages": [
      {"version": "v0.9", "createSurface": {"surfaceId": "trip", "catalogId": "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"}},
      {"version": "v0.9", "updateComponents": {"surfaceId": "trip", "components": [
        {"id": "root", "component": "Column", "children": ["title", "name", "go"]},
        {"id": "title", "component": "Text", "text": "Réservez \"vite\" \u00e9 ✈️", "variant": "h2"},
        {"id": "name", "component": "TextField", "label": "Name", "value": {"path": "/form/name"}}
      ]}},
      {"version": "v0.9", "updateComponents": {"surfaceId": "trip", "components": [
        {"id": "go", "component": "Button", "child": "go-label", "variant": "primary",
         "action": {"event": {"name": "book", "context": {"name": {"path": "/form/name"}, "seats": 2}}}},
        {"id": "go-label", "component": "Text", "text": "Book"}
      ]}},
      {"version": "v0.9", "updateDataModel": {"surfaceId": "trip", "path": "/form", "value": {"name": "Ada", "seats": 2, "ratio": -1.5e3, "ok": true, "none": null}}}
    ], "note": "ignored"}
    """#

    static func message(_ type: String, _ body: [String: JSON]) -> JSON {
        .object(["version": .string("v0.9"), type: .object(body)])
    }

    static func create(_ id: String, catalog: String = catalog) -> JSON {
        message("createSurface", ["surfaceId": .string(id), "catalogId": .string(catalog)])
    }

    static func components(_ id: String, _ list: [JSON]) -> JSON {
        message("updateComponents", ["surfaceId": .string(id), "components": .array(list)])
    }

    static func data(_ id: String, path: String? = nil, _ value: JSON?) -> JSON {
        var body: [String: JSON] = ["surfaceId": .string(id)]
        if let path { body["path"] = .string(path) }
        if let value { body["value"] = value }
        return message("updateDataModel", body)
    }

    static func component(_ id: String, _ type: String, _ fields: [String: JSON] = [:]) -> JSON {
        var all = fields
        all["id"] = .string(id)
        all["component"] = .string(type)
        return .object(all)
    }

    static func text(_ id: String, _ text: String = "hello") -> JSON {
        component(id, "Text", ["text": .string(text)])
    }

    static func column(_ id: String, _ children: [String]) -> JSON {
        component(id, "Column", ["children": .array(children.map(JSON.string))])
    }

    static func board(files: Set<String> = ["file1"]) -> SurfaceBoard {
        SurfaceBoard(limits: SurfaceLimits(), images: ImagePolicy { files.contains($0) })
    }
}
