import ParleyA2UI
import ParleyPrimitives
import XCTest

/// The board judges each message: valid ones go out (held until the tree is complete), hostile ones are
/// refused with a reason and change nothing.
final class SurfaceBoardTests: XCTestCase {
    private typealias S = A2UISamples

    private func emitted(_ outcome: SurfaceBoard.Outcome, file: StaticString = #filePath, line: UInt = #line) -> [JSON] {
        guard case .emitted(let messages) = outcome else {
            XCTFail("not emitted: \(outcome)", file: file, line: line)
            return []
        }
        return messages.map(\.json)
    }

    private func refusal(_ outcome: SurfaceBoard.Outcome, file: StaticString = #filePath, line: UInt = #line) -> String {
        guard case .refused(let error) = outcome else {
            XCTFail("not refused: \(outcome)", file: file, line: line)
            return ""
        }
        return error.message
    }

    func testTheFormIsHeldUntilItsTreeIsCompleteThenSentInOrder() throws {
        var board = S.board()
        let messages = try XCTUnwrap(JSON(parsing: S.formArguments)?["messages"]?.arrayValue)
        XCTAssertEqual(board.apply(messages[0]), .held)
        // root names 'go', which does not exist yet: held, nothing shown.
        XCTAssertEqual(board.apply(messages[1]), .held)
        XCTAssertEqual(emitted(board.apply(messages[2])), Array(messages[0...2]))
        XCTAssertEqual(emitted(board.apply(messages[3])), [messages[3]])
        XCTAssertEqual(board.surface("trip")?.dataModel["form"]?["name"], .string("Ada"))
        XCTAssertEqual(board.finish(), [])
    }

    func testBothCatalogIdsAreAcceptedAndOthersRefused() {
        var board = S.board()
        XCTAssertEqual(board.apply(S.create("a", catalog: S.oldCatalog)), .held)
        XCTAssertEqual(board.apply(S.create("b")), .held)
        XCTAssertTrue(refusal(board.apply(S.create("c", catalog: "https://evil.example/catalog.json"))).contains("not accepted"))
        XCTAssertTrue(refusal(board.apply(S.create("a"))).contains("exists already"))
    }

    func testShapeErrors() {
        var board = S.board()
        XCTAssertTrue(refusal(board.apply(.object(["createSurface": .object(["surfaceId": .string("x")])]))).contains("v0.9"))
        XCTAssertTrue(refusal(board.apply(.object(["version": .string("v0.8"),
                                                   "createSurface": .object(["surfaceId": .string("x")])]))).contains("v0.9"))
        XCTAssertTrue(refusal(board.apply(S.message("beginRendering", ["surfaceId": .string("x")]))).contains("unknown message type"))
        XCTAssertTrue(refusal(board.apply(S.message("createSurface", ["surfaceId": .string("x"), "catalogId": .string(S.catalog),
                                                                     "extra": .bool(true)]))).contains("no field 'extra'"))
        XCTAssertTrue(refusal(board.apply(.string("hi"))).contains("JSON object"))
        XCTAssertTrue(refusal(board.apply(S.components("nowhere", [S.text("root")]))).contains("no surface"))
    }

    func testUnknownAndRefusedComponentsAreNamed() {
        var board = S.board()
        _ = board.apply(S.create("s"))
        XCTAssertTrue(refusal(board.apply(S.components("s", [S.component("root", "Iframe", ["src": .string("x")])])))
            .contains("'Iframe' is not a component"))
        XCTAssertTrue(refusal(board.apply(S.components("s", [S.component("root", "Video", ["url": .string("/api/files/file1")])])))
            .contains("Video is not accepted"))
        XCTAssertTrue(refusal(board.apply(S.components("s", [S.component("root", "AudioPlayer", ["url": .string("x")])])))
            .contains("AudioPlayer"))
        XCTAssertTrue(refusal(board.apply(S.components("s", [S.component("root", "Text", ["text": .string("a"),
                                                                                          "onclick": .string("x")])])))
            .contains("no property 'onclick'"))
        XCTAssertTrue(refusal(board.apply(S.components("s", [S.component("root", "Text")]))).contains("needs 'text'"))
        XCTAssertTrue(refusal(board.apply(S.components("s", [S.component("root", "Text", ["text": .string("a"),
                                                                                          "variant": .string("h9")])])))
            .contains("must be one of"))
        // Nothing refused changed the surface: a valid tree is still accepted.
        XCTAssertEqual(emitted(board.apply(S.components("s", [S.text("root")]))).count, 2)
    }

    func testEveryAcceptedComponentPasses() {
        var board = S.board()
        _ = board.apply(S.create("all"))
        let path = JSON.object(["path": .string("/v")])
        let list: [JSON] = [
            S.column("root", ["t", "i", "ic", "r", "l", "c", "tabs", "m", "d", "b", "tf", "cb", "cp", "sl", "dt"]),
            S.text("t"), S.component("i", "Image", ["url": .string("/api/files/file1"), "fit": .string("cover")]),
            S.component("ic", "Icon", ["name": .string("star")]),
            S.component("r", "Row", ["children": .object(["componentId": .string("t2"), "path": .string("/items")])]),
            S.text("t2"), S.component("l", "List", ["children": .array([]), "direction": .string("horizontal")]),
            S.component("c", "Card", ["child": .string("t3")]), S.text("t3"),
            S.component("tabs", "Tabs", ["tabs": .array([.object(["title": .string("A"), "child": .string("t4")])])]),
            S.text("t4"), S.component("m", "Modal", ["trigger": .string("t5"), "content": .string("t6")]),
            S.text("t5"), S.text("t6"), S.component("d", "Divider"),
            S.component("b", "Button", ["child": .string("t7"), "action": .object(["functionCall": .object([
                "call": .string("openUrl"), "args": .object(["url": .string("https://example.com/")])])])]),
            S.text("t7"), S.component("tf", "TextField", ["label": .string("L"), "value": path,
                                                          "checks": .array([.object(["condition": .object([
                                                              "call": .string("required"), "args": .object(["value": path])]),
                                                              "message": .string("needed")])])]),
            S.component("cb", "CheckBox", ["label": .string("L"), "value": .bool(true)]),
            S.component("cp", "ChoicePicker", ["options": .array([.object(["label": .string("A"), "value": .string("a")])]),
                                               "value": .array([.string("a")])]),
            S.component("sl", "Slider", ["value": .integer(3), "max": .integer(10)]),
            S.component("dt", "DateTimeInput", ["value": path, "enableDate": .bool(true)]),
        ]
        XCTAssertEqual(emitted(board.apply(S.components("all", list))).count, 2)
    }

    func testCyclesAndDanglingChildren() {
        var board = S.board()
        _ = board.apply(S.create("s"))
        XCTAssertTrue(refusal(board.apply(S.components("s", [S.column("root", ["a"]), S.column("a", ["b"]),
                                                              S.column("b", ["a"])]))).contains("cycle"))
        XCTAssertTrue(refusal(board.apply(S.components("s", [S.column("root", ["root"])]))).contains("cycle"))
        // Dangling while arriving: held; never completed: dropped at the end with why.
        XCTAssertEqual(board.apply(S.components("s", [S.column("root", ["later"])])), .held)
        XCTAssertEqual(board.finish().map(\.message), ["surface 's' was not drawn: children name components that do not exist: later"])
        XCTAssertNil(board.surface("s"))
    }

    func testMissingRootIsHeldThenReported() {
        var board = S.board()
        _ = board.apply(S.create("s"))
        XCTAssertEqual(board.apply(S.components("s", [S.text("top")])), .held)
        XCTAssertTrue(board.finish().first?.message.contains("no component with id 'root'") ?? false)
    }

    func testALiveSurfaceRefusesAnUpdateThatBreaksItsTree() {
        var board = S.board()
        _ = board.apply(S.create("s"))
        _ = board.apply(S.components("s", [S.text("root")]))
        XCTAssertTrue(refusal(board.apply(S.components("s", [S.column("root", ["ghost"])]))).contains("ghost"))
        XCTAssertEqual(emitted(board.apply(S.components("s", [S.column("root", ["x"]), S.text("x")]))).count, 1)
    }

    func testImagesMustBeTheCallersFiles() {
        var board = S.board(files: ["mine"])
        _ = board.apply(S.create("s"))
        for url in ["javascript:alert(1)", "https://evil.example/a.png", "data:image/png;base64,AAAA",
                    "/api/files/theirs", "/api/files/../x", "//evil.example/a.png", "/api/files/mine?x=1"] {
            XCTAssertFalse(refusal(board.apply(S.components("s", [S.component("root", "Image", ["url": .string(url)])]))).isEmpty,
                           url)
        }
        XCTAssertEqual(emitted(board.apply(S.components("s", [S.component("root", "Image", ["url": .string("/api/files/mine")])]))).count, 2)
        // A bound URL is checked once bindings resolve, and again on every data-model change.
        _ = board.apply(S.components("s", [S.component("root", "Image", ["url": .object(["path": .string("/pic")])])]))
        XCTAssertTrue(refusal(board.apply(S.data("s", path: "/pic", .string("javascript:alert(1)")))).contains("Parley files"))
        XCTAssertEqual(emitted(board.apply(S.data("s", path: "/pic", .string("/api/files/mine")))).count, 1)
        XCTAssertTrue(refusal(board.apply(S.data("s", .object(["pic": .string("https://x.example/")])))).contains("Parley files"))
        XCTAssertEqual(board.surface("s")?.dataModel["pic"], .string("/api/files/mine"))
        // Inside a template (relative path): every list item is checked.
        XCTAssertEqual(emitted(board.apply(S.components("s", [
            S.component("root", "Row", ["children": .object(["componentId": .string("img"), "path": .string("/rows")])]),
            S.component("img", "Image", ["url": .object(["path": .string("src")])])]))).count, 1)
        XCTAssertEqual(emitted(board.apply(S.data("s", path: "/rows", .array([.object(["src": .string("/api/files/mine")])])))).count, 1)
        XCTAssertTrue(refusal(board.apply(S.data("s", path: "/rows/1", .object(["src": .string("https://x.example")]))))
            .contains("Parley files"))
        XCTAssertTrue(refusal(board.apply(S.components("s", [S.component("root", "Image", ["url": .object([
            "call": .string("formatString"), "args": .object(["value": .string("x")])])])]))).contains("not a function call"))
        XCTAssertTrue(refusal(board.apply(S.message("createSurface", ["surfaceId": .string("t"), "catalogId": .string(S.catalog),
                                                                     "theme": .object(["iconUrl": .string("https://x.example/i.png")])])))
            .contains("iconUrl"))
    }

    func testOpenUrlOnlyHTTPS() {
        var board = S.board()
        _ = board.apply(S.create("s"))
        for url in ["javascript:alert(1)", "http://example.com", "data:text/html,x", "https://ex ample.com"] {
            let button = S.component("root", "Button", ["child": .string("l"), "action": .object(["functionCall": .object([
                "call": .string("openUrl"), "args": .object(["url": .string(url)])])])])
            XCTAssertTrue(refusal(board.apply(S.components("s", [button, S.text("l")]))).contains("https:"), url)
        }
    }

    func testBindingsMustBeJSONPointersWithoutPrototypeKeys() {
        var board = S.board()
        _ = board.apply(S.create("s"))
        for path in ["/__proto__/polluted", "/a/constructor", "/x~2", "/x~", "prototype"] {
            let field = S.component("root", "TextField", ["label": .string("L"), "value": .object(["path": .string(path)])])
            XCTAssertFalse(refusal(board.apply(S.components("s", [field]))).isEmpty, path)
        }
        _ = board.apply(S.components("s", [S.text("root")]))
        XCTAssertFalse(refusal(board.apply(S.data("s", path: "/__proto__", .object([:])))).isEmpty)
        XCTAssertFalse(refusal(board.apply(S.data("s", .object(["a": .object(["__proto__": .integer(1)])])))).isEmpty)
        XCTAssertFalse(refusal(board.apply(S.data("s", path: "relative", .integer(1)))).isEmpty)
        XCTAssertEqual(emitted(board.apply(S.data("s", path: "/a~1b/~0c", .integer(1)))).count, 1)
        XCTAssertEqual(board.surface("s")?.dataModel["a/b"]?["~c"], .integer(1))
    }

    func testTenThousandComponentsAndDeepTreesAreRefused() {
        var board = S.board()
        _ = board.apply(S.create("s"))
        let many = [S.column("root", (0..<9_999).map { "t\($0)" })] + (0..<9_999).map { S.text("t\($0)") }
        XCTAssertTrue(refusal(board.apply(S.components("s", many))).contains("at most 500"))
        // 499 more in one message is fine; one more in another is not.
        let full = [S.column("root", (0..<499).map { "t\($0)" })] + (0..<499).map { S.text("t\($0)") }
        XCTAssertEqual(emitted(board.apply(S.components("s", full))).count, 2)
        XCTAssertTrue(refusal(board.apply(S.components("s", [S.text("extra")]))).contains("at most 500"))
        var deep = SurfaceBoard(limits: SurfaceLimits(maxDepth: 10), images: .trusted)
        _ = deep.apply(S.create("d"))
        let chain = (0..<20).map { S.column($0 == 0 ? "root" : "c\($0)", ["c\($0 + 1)"]) } + [S.text("c20")]
        XCTAssertTrue(refusal(deep.apply(S.components("d", chain))).contains("levels deep"))
    }

    func testAnUpdateToAnEarlierSurfaceFoldsOverTheHistory() {
        let history = [S.create("old"), S.components("old", [S.text("root")]), S.data("old", .object(["n": .integer(1)]))]
        var board = SurfaceBoard(limits: SurfaceLimits(), images: ImagePolicy { _ in false }, history: history)
        XCTAssertEqual(board.surface("old")?.live, true)
        XCTAssertEqual(emitted(board.apply(S.components("old", [S.column("root", ["b"]), S.text("b")]))).count, 1)
        XCTAssertEqual(emitted(board.apply(S.data("old", path: "/n", .integer(2)))).count, 1)
        XCTAssertEqual(board.surface("old")?.dataModel, .object(["n": .integer(2)]))
        XCTAssertEqual(emitted(board.apply(S.message("deleteSurface", ["surfaceId": .string("old")]))).count, 1)
        XCTAssertEqual(board.surface("old")?.deleted, true)
        XCTAssertTrue(refusal(board.apply(S.data("old", .object([:])))).contains("deleted"))
        XCTAssertTrue(refusal(board.apply(S.create("old", catalog: "x"))).contains("not accepted"))
    }

    func testAnImageBoundToTheItemItselfIsCheckedOnEachItem() {
        var board = S.board(files: ["mine"])
        _ = board.apply(S.create("s"))
        let list = S.component("root", "List", ["children": .object(["componentId": .string("img"), "path": .string("/pics")])])
        let image = S.component("img", "Image", ["url": .object(["path": .string(".")])])
        XCTAssertEqual(emitted(board.apply(S.components("s", [list, image]))).count, 2)
        XCTAssertEqual(emitted(board.apply(S.data("s", path: "/pics", .array([.string("/api/files/mine")])))).count, 1)
        XCTAssertTrue(refusal(board.apply(S.data("s", path: "/pics/1", .string("https://evil.example/a.png")))).contains("Parley files"))
        XCTAssertTrue(refusal(board.apply(S.data("s", path: "/pics/1", .string("/api/files/theirs")))).contains("not one of your files"))
        // Lists of objects elsewhere in the model are not image URLs of a '.' binding.
        XCTAssertEqual(emitted(board.apply(S.data("s", path: "/people", .array([.object(["name": .string("Ada")])])))).count, 1)
    }

    func testEachImageURLIsAskedAboutOnceAndTrustedHistoryNotAtAll() {
        let asked = Asked()
        var board = SurfaceBoard(limits: SurfaceLimits(), images: ImagePolicy { asked.add($0); return $0 == "mine" })
        _ = board.apply(S.create("s"))
        let list = S.component("root", "List", ["children": .object(["componentId": .string("row"), "path": .string("/rows")])])
        let images = (0..<5).map { S.component("i\($0)", "Image", ["url": .object(["path": .string("src")])]) }
        let row = S.column("row", (0..<5).map { "i\($0)" })
        XCTAssertEqual(emitted(board.apply(S.components("s", [list, row] + images))).count, 2)
        let rows = JSON.array(Array(repeating: .object(["src": .string("/api/files/mine")]), count: 200))
        XCTAssertEqual(emitted(board.apply(S.data("s", path: "/rows", rows))).count, 1)
        XCTAssertEqual(emitted(board.apply(S.data("s", path: "/n", .integer(1)))).count, 1)
        XCTAssertEqual(asked.ids, ["mine"], "one URL, asked about once for the board's life")
        let bad = S.data("s", path: "/rows/0/src", .string("/api/files/theirs"))
        XCTAssertTrue(refusal(board.apply(bad)).contains("not one of your files"))
        XCTAssertTrue(refusal(board.apply(bad)).contains("not one of your files"))
        XCTAssertEqual(asked.ids, ["mine", "theirs"])
        // History folds under .trusted: its bound URLs are not asked about again.
        let history = [S.create("s"), S.components("s", [S.component("root", "Image", ["url": .object(["path": .string("/pic")])])]),
                       S.data("s", path: "/pic", .string("/api/files/old"))]
        let later = Asked()
        var folded = SurfaceBoard(limits: SurfaceLimits(), images: ImagePolicy { later.add($0); return true }, history: history)
        XCTAssertEqual(folded.surface("s")?.live, true)
        XCTAssertEqual(later.ids, [])
        XCTAssertEqual(emitted(folded.apply(S.data("s", path: "/n", .integer(1)))).count, 1)
        XCTAssertEqual(later.ids, ["old"], "a new message checks the surface it makes")
    }

    func testPatternsThatCanBacktrackAreRefusedNamingTheComponent() {
        var board = S.board()
        _ = board.apply(S.create("s"))
        func field(_ pattern: String) -> JSON {
            S.component("root", "TextField", ["label": .string("L"), "validationRegexp": .string(pattern)])
        }
        func checked(_ pattern: JSON) -> JSON {
            S.component("root", "TextField", ["label": .string("L"), "value": .object(["path": .string("/v")]),
                                              "checks": .array([.object(["message": .string("no"), "condition": .object([
                                                  "call": .string("regex"),
                                                  "args": .object(["value": .object(["path": .string("/v")]), "pattern": pattern])])])])])
        }
        for pattern in ["(a+)+$", "(a|aa)*b", "(x+x+)+y", "(ab){2,}", "(a)?", #"(a)\1"#, String(repeating: "a", count: 257)] {
            let reason = refusal(board.apply(S.components("s", [field(pattern)])))
            XCTAssertTrue(reason.contains("component 'root' (TextField)"), reason)
            XCTAssertTrue(refusal(board.apply(S.components("s", [checked(.string(pattern))]))).contains("component 'root'"), pattern)
        }
        XCTAssertTrue(refusal(board.apply(S.components("s", [checked(.object(["path": .string("/p")]))]))).contains("literal"))
        // Linear patterns pass, and so do a class holding ')' and an escaped parenthesis.
        XCTAssertEqual(emitted(board.apply(S.components("s", [field(#"^[A-Z][a-z]+ \d{2,4}$"#)]))).count, 2)
        for pattern in [#"^[()+]*$"#, #"^\(\d+\)?$"#, #"^(ab|cd)$"#, String(repeating: "a", count: 256)] {
            XCTAssertEqual(emitted(board.apply(S.components("s", [field(pattern)]))).count, 1, pattern)
            XCTAssertEqual(emitted(board.apply(S.components("s", [checked(.string(pattern))]))).count, 1, pattern)
        }
    }
}

/// The file ids an `ImagePolicy` was asked about, in order (its closure is `@Sendable`).
private final class Asked: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []

    func add(_ id: String) { lock.withLock { list.append(id) } }

    var ids: [String] { lock.withLock { list } }
}
