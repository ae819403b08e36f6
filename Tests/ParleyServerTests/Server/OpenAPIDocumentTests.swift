import Foundation
@testable import ParleyServer
import ParleyTestSupport
import XCTest

/// docs/openapi.json is the API's machine-readable description: served as is, and kept complete by
/// comparing it with the routes the server really registers.
final class OpenAPIDocumentTests: XCTestCase {
    private var documentText: String {
        get throws {
            try String(contentsOf: TestParley.repositoryRoot.appendingPathComponent("docs/openapi.json"), encoding: .utf8)
        }
    }

    func testServedDocumentIsDocsFileWithoutCredentials() async throws {
        let expected = try documentText
        let local = try startParley()
        let team = try startTeamParley()
        for parley in [local, team] {
            let reply = try await parley.call("GET", "/api/openapi.json")
            XCTAssertEqual(reply.status, 200)
            XCTAssertEqual(reply.headers["content-type"], "application/json; charset=utf-8")
            XCTAssertTrue(reply.text == expected, "GET /api/openapi.json differs from docs/openapi.json: "
                          + "run Tests/openapi/generate.py")
        }
        // Only GET (and HEAD); a query is ignored; a path below it does not exist.
        let wrongMethod = try await local.call("POST", "/api/openapi.json", json: [String: Any]())
        XCTAssertEqual(wrongMethod.status, 405)
        XCTAssertEqual(wrongMethod.errorCode, "method_not_allowed")
        let withQuery = try await local.call("GET", "/api/openapi.json?x=%00")
        XCTAssertTrue(withQuery.text == expected)
        let below = try await local.call("GET", "/api/openapi.json/x")
        XCTAssertEqual(below.status, 404)
    }

    func testDocumentIsOpenAPI31() throws {
        let document = try XCTUnwrap(ExactJSON.parse(try documentText)?.foundation as? [String: Any])
        XCTAssertEqual(document["openapi"] as? String, "3.1.0")
        let schemes = (document["components"] as? [String: Any])?["securitySchemes"] as? [String: Any]
        XCTAssertEqual(Set(schemes?.keys.map { $0 } ?? []), ["sessionCookie", "apiToken"])
    }

    /// Fails when a route exists that the document does not describe, or the reverse.
    func testEveryRouteIsDocumentedAndNothingElse() async throws {
        let parley = try startParley()
        let registered = Set(parley.app.routes.map { route in
            route.method + " " + route.pattern.split(separator: "/").map { piece in
                piece.hasPrefix(":") ? "{\(piece.dropFirst())}" : String(piece)
            }.reduce("") { $0 + "/" + $1 }
        })
        let document = try XCTUnwrap(ExactJSON.parse(try documentText)?.foundation as? [String: Any])
        let paths = try XCTUnwrap(document["paths"] as? [String: Any])
        let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]
        var documented = Set<String>()
        for (path, item) in paths {
            for method in (item as? [String: Any] ?? [:]).keys where methods.contains(method) {
                documented.insert(method.uppercased() + " " + path)
            }
        }
        XCTAssertGreaterThan(registered.count, 30)
        XCTAssertEqual(registered.subtracting(documented).sorted(), [], "routes missing from docs/openapi.json")
        XCTAssertEqual(documented.subtracting(registered).sorted(), [], "documented routes the server lacks")
    }
}
