import ParleyAuth
import XCTest

/// Argon2id through libsodium, and the random secrets that stand for sessions and API tokens.
final class CredentialTests: XCTestCase {
    /// The smallest cost libsodium allows: the same algorithm, fast enough for many test sign-ins.
    private let hasher = PasswordHasher(operations: 1, memoryBytes: 8192)

    func testAHashVerifiesItsPasswordOnly() throws {
        let hash = try hasher.hash("correct horse")
        XCTAssertTrue(hash.hasPrefix("$argon2id$"), hash)
        XCTAssertFalse(hash.contains("correct horse"))
        XCTAssertTrue(hasher.verify("correct horse", against: hash))
        XCTAssertFalse(hasher.verify("correct hors", against: hash))
        XCTAssertFalse(hasher.verify("correct horse ", against: hash))
        XCTAssertFalse(hasher.verify("", against: hash))
        XCTAssertNotEqual(try hasher.hash("correct horse"), hash, "a new salt each time")
    }

    func testUnicodeAndNULArePartOfThePassword() throws {
        let hash = try hasher.hash("pässwörd\u{0}tail")
        XCTAssertTrue(hasher.verify("pässwörd\u{0}tail", against: hash))
        XCTAssertFalse(hasher.verify("pässwörd", against: hash), "nothing after a NUL is ignored")
    }

    func testMalformedHashesNeverMatch() {
        for stored in ["", "plain", "$argon2id$v=19$m=8,t=1,p=1$", String(repeating: "x", count: 500)] {
            XCTAssertFalse(hasher.verify("plain", against: stored), stored)
        }
    }

    func testACostChangeAsksForARehash() throws {
        let hash = try hasher.hash("password1")
        XCTAssertFalse(hasher.needsRehash(hash))
        XCTAssertTrue(PasswordHasher.interactive.needsRehash(hash))
    }

    func testTheCostIsReadFromTheHashItself() throws {
        XCTAssertEqual(PasswordCost(hash: try hasher.hash("password1")), PasswordCost(memoryKiB: 8, operations: 1))
        let other = PasswordHasher(operations: 2, memoryBytes: 64 * 1024)
        XCTAssertEqual(PasswordCost(hash: try other.hash("password1")), PasswordCost(other))
        XCTAssertEqual(PasswordCost(other).hasher.memoryBytes, other.memoryBytes)
        XCTAssertEqual(PasswordCost(hash: "$argon2id$v=19$m=65536,t=3,p=1$c2FsdA$aGFzaA"),
                       PasswordCost(memoryKiB: 65536, operations: 3))
        for malformed in ["", "plain", "$argon2id$v=19$m=8,t=1,p=1$", "$argon2i$v=19$m=8,t=1,p=1$a$b",
                          "$argon2id$v=19$m=0,t=1,p=1$a$b", "$argon2id$v=19$t=1,p=1$a$b", "$argon2id$v=19$m=x,t=1$a$b"] {
            XCTAssertNil(PasswordCost(hash: malformed), malformed)
        }
    }

    func testSecretsAreRandomURLSafeAndStoredAsDigests() {
        let secrets = (0..<200).map { _ in SecretToken.generate(prefix: "pt_") }
        XCTAssertEqual(Set(secrets).count, secrets.count)
        for secret in secrets {
            XCTAssertTrue(secret.hasPrefix("pt_"))
            XCTAssertEqual(secret.count, 3 + 43, secret)
            XCTAssertTrue(secret.dropFirst(3).allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        }
        XCTAssertEqual(SecretToken.digest("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertNotEqual(SecretToken.digest(secrets[0]), SecretToken.digest(secrets[1]))
    }
}
