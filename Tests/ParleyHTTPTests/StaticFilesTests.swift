import Foundation
import ParleyHTTP
import ParleyTestSupport
import XCTest

final class StaticFilesTests: XCTestCase {
    private var base = ""
    private var folder = URL(fileURLWithPath: "/")

    override func setUpWithError() throws {
        let temp = FileManager.default.temporaryDirectory.appendingPathComponent("parley-static-\(UUID().uuidString)")
        folder = temp.appendingPathComponent("Public")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("assets"), withIntermediateDirectories: true)
        let files: [String: String] = [
            "index.html": "<h1>home</h1>", "app.js": "let x = 1", "style.css": "body{}", "icon.svg": "<svg/>",
            "logo.png": "png", "favicon.ico": "ico", "data.json": "{}", "site.webmanifest": "{}",
            "robots.txt": "ok", "assets/font.woff2": "font", "assets/index.html": "<p>sub</p>", ".env": "SECRET",
        ]
        for (name, text) in files {
            try Data(text.utf8).write(to: folder.appendingPathComponent(name))
        }
        try Data("outside".utf8).write(to: temp.appendingPathComponent("outside.txt"))
        try FileManager.default.createSymbolicLink(
            atPath: folder.appendingPathComponent("escape.txt").path, withDestinationPath: temp.appendingPathComponent("outside.txt").path)
        addTeardownBlock { try? FileManager.default.removeItem(at: temp) }
        let publicPath = folder.path
        base = try startServer(self, configure: { $0.publicDirectory = publicPath }, routes: { router in
            router.on("GET", "/api/hello") { _ in .text("hi") }
        }).base
    }

    func testContentTypesByExtension() throws {
        let expected = [
            "/index.html": "text/html; charset=utf-8", "/app.js": "text/javascript; charset=utf-8",
            "/style.css": "text/css; charset=utf-8", "/icon.svg": "image/svg+xml", "/logo.png": "image/png",
            "/favicon.ico": "image/x-icon", "/data.json": "application/json; charset=utf-8",
            "/site.webmanifest": "application/manifest+json", "/robots.txt": "text/plain; charset=utf-8",
            "/assets/font.woff2": "font/woff2",
        ]
        let client = TestHTTPClient()
        for (path, type) in expected {
            let response = try client.request(base + path)
            XCTAssertEqual(response.status, 200, path)
            XCTAssertEqual(response.header("Content-Type"), type, path)
            XCTAssertEqual(response.header("X-Content-Type-Options"), "nosniff", path)
        }
    }

    func testIndexServedAtRootAndInFolders() throws {
        let client = TestHTTPClient()
        let root = try client.request(base + "/")
        XCTAssertEqual(root.text, "<h1>home</h1>")
        XCTAssertEqual(root.header("Cache-Control"), "no-cache")
        XCTAssertEqual(try client.request(base + "/assets/").text, "<p>sub</p>")
    }

    func testAssetsGetMaxAgeAndLastModified() throws {
        let response = try TestHTTPClient().request(base + "/app.js")
        XCTAssertEqual(response.header("Cache-Control"), "public, max-age=3600")
        XCTAssertTrue(response.header("Last-Modified")?.hasSuffix(" GMT") ?? false)
    }

    func testMatchingETagGives304() throws {
        let client = TestHTTPClient()
        let first = try client.request(base + "/app.js")
        let etag = try XCTUnwrap(first.header("ETag"))
        let second = try client.request(base + "/app.js", headers: [("If-None-Match", etag)])
        XCTAssertEqual(second.status, 304)
        XCTAssertEqual(second.body, [])
        let stale = try client.request(base + "/app.js", headers: [("If-None-Match", "\"other\"")])
        XCTAssertEqual(stale.status, 200)
    }

    func testTraversalAttemptsAreNotFound() throws {
        let client = TestHTTPClient()
        for path in ["/../Package.swift", "/%2e%2e/outside.txt", "/..%2foutside.txt", "/assets/..%2F..%2Foutside.txt",
                     "/..\\outside.txt", "/%5c..%5coutside.txt", "/app.js%00.png", "/escape.txt", "/.env"] {
            let response = try client.request(base + path)
            XCTAssertEqual(response.status, 404, path)
            XCTAssertFalse(response.text.contains("outside"), path)
            XCTAssertFalse(response.text.contains("SECRET"), path)
        }
    }

    func testApiPathsNeverFallToStaticFiles() throws {
        try Data("nope".utf8).write(to: folder.appendingPathComponent("api-file.txt"))
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("api"), withIntermediateDirectories: true)
        try Data("static".utf8).write(to: folder.appendingPathComponent("api/data.txt"))
        let response = try TestHTTPClient().request(base + "/api/data.txt")
        XCTAssertEqual(response.status, 404)
        XCTAssertTrue(response.text.contains(#""code":"not_found""#))
    }

    func testPostToStaticPathIsNotFound() throws {
        let response = try TestHTTPClient().request("POST", base + "/app.js", body: Array("x".utf8))
        XCTAssertEqual(response.status, 404)
    }
}
