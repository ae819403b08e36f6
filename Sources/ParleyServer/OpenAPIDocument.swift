import ParleyHTTP

/// The OpenAPI document served at `GET /api/openapi.json`. docs/openapi.json is the one copy:
/// SwiftPM embeds its bytes in the binary at build time (`Sources/ParleyServer/openapi.json` is a link to
/// it), so the server needs no file beside it and the served document cannot drift from the one in docs.
enum OpenAPIDocument {
    /// The answer to `GET /api/openapi.json`: constant, so built once.
    static let response = HTTPResponse(status: 200,
                                       headers: [("Content-Type", "application/json; charset=utf-8")],
                                       body: .bytes(PackageResources.openapi_json))
}
