import ParleyAuth
import ParleyCLI
import ParleyServer
import ParleyStore
import XCTest

/// `parley user …` on a real database file (the process test runs the binary itself).
final class UserCommandTests: XCTestCase {
    private let hasher = PasswordHasher(operations: 1, memoryBytes: 8192)

    private func store() throws -> Store {
        try Store(path: TestFiles.directory("user-command").appendingPathComponent("parley.db").path)
    }

    private func command(_ words: String) throws -> UserCommand {
        let parts = words.split(separator: " ").map(String.init)
        return try UserCommand.parse(parts.filter { !$0.hasPrefix("--") },
                                     switches: Set(parts.filter { $0.hasPrefix("--") })).get()
    }

    func testAddListPasswdDisableEnable() throws {
        let store = try store()
        XCTAssertEqual(try command("add ada --admin").run(store: store, hasher: hasher) { "first password" },
                       ["added ada (admin)"])
        let generated = try command("add bob").run(store: store, hasher: hasher) { nil }
        XCTAssertEqual(generated.count, 2, "a generated password is printed once")
        let password = try XCTUnwrap(generated.last?.split(separator: " ").dropFirst().first.map(String.init))
        let bob = try XCTUnwrap(try store.user(username: "BOB"))
        XCTAssertTrue(hasher.verify(password, against: bob.passwordHash ?? ""))
        XCTAssertEqual(try command("list").run(store: store, hasher: hasher) { nil }, ["ada\tadmin", "bob\tmember"])

        _ = try store.createSession(userID: bob.id, digest: "d1", userAgent: "x")
        _ = try command("passwd bob").run(store: store, hasher: hasher) { "second password" }
        XCTAssertTrue(hasher.verify("second password", against: try store.user(id: bob.id)?.passwordHash ?? ""))
        XCTAssertEqual(try store.sessions(userID: bob.id).count, 0, "a new password ends the sessions")

        _ = try command("disable bob").run(store: store, hasher: hasher) { nil }
        XCTAssertEqual(try store.user(id: bob.id)?.disabled, true)
        _ = try command("enable bob").run(store: store, hasher: hasher) { nil }
        XCTAssertEqual(try store.user(id: bob.id)?.disabled, false)
    }

    func testBadUseSaysWhy() throws {
        let store = try store()
        for words in ["", "add", "add a b", "remove bob", "list x"] {
            XCTAssertThrowsError(try command(words), words)
        }
        XCTAssertThrowsError(try command("add ada").run(store: store, hasher: hasher) { "short" }) {
            XCTAssertTrue("\($0)".contains("8 characters"))
        }
        XCTAssertThrowsError(try command("disable nobody").run(store: store, hasher: hasher) { nil }) {
            XCTAssertEqual("\($0)", "no user nobody")
        }
        _ = try command("add ada --admin").run(store: store, hasher: hasher) { "first password" }
        XCTAssertThrowsError(try command("add ADA").run(store: store, hasher: hasher) { "other password" })
        XCTAssertThrowsError(try command("disable ada").run(store: store, hasher: hasher) { nil },
                             "the last admin cannot be disabled")
    }
}
