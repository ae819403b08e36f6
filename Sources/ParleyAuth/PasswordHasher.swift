import CSodium

/// Passwords kept as Argon2id strings (libsodium's `crypto_pwhash_str`): salt, algorithm and cost
/// travel inside the string, so the cost can be raised later and old hashes still verify.
///
/// Thread-safe (a value; libsodium's functions are reentrant). Hashing takes tens of milliseconds
/// and `memoryBytes` of memory on purpose: call it off the cooperative pool for many users at once.
///
/// The ParleyAuth module is team mode's credentials: Argon2id password hashes and random secrets
/// (`SecretToken`), and the only module that touches libsodium. It must never know users, sessions,
/// the store, HTTP or requests: it hashes, verifies and makes secrets for whoever asks.
public struct PasswordHasher: Sendable {
    /// Argon2id passes over memory.
    public var operations: UInt64
    /// Argon2id memory, in bytes.
    public var memoryBytes: Int

    /// libsodium's "interactive" cost: the recommended floor for logins.
    public static let interactive = PasswordHasher(operations: parley_pwhash_opslimit_interactive(),
                                                   memoryBytes: parley_pwhash_memlimit_interactive())

    public init(operations: UInt64, memoryBytes: Int) {
        self.operations = operations
        self.memoryBytes = memoryBytes
    }

    /// The shortest password accepted.
    public static let minimumLength = 8

    /// The Argon2id string for `password`.
    public func hash(_ password: String) throws(AuthError) -> String {
        guard Sodium.ready else { throw .cryptoUnavailable }
        var out = [CChar](repeating: 0, count: parley_pwhash_strbytes())
        let bytes = Array(password.utf8CString)  // never empty, so never a nil pointer
        let result = crypto_pwhash_str(&out, bytes, UInt64(bytes.count - 1), operations, memoryBytes)
        guard result == 0 else { throw .cryptoUnavailable }
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `password` matches `hash`. A malformed hash never matches.
    public func verify(_ password: String, against hash: String) -> Bool {
        guard Sodium.ready else { return false }
        var stored = Array(hash.utf8CString)
        guard stored.count <= parley_pwhash_strbytes() else { return false }
        stored += [CChar](repeating: 0, count: parley_pwhash_strbytes() - stored.count)
        let bytes = Array(password.utf8CString)
        return crypto_pwhash_str_verify(&stored, bytes, UInt64(bytes.count - 1)) == 0
    }

    /// Whether `hash` was made with another cost than this hasher's (rehash it at the next sign-in).
    public func needsRehash(_ hash: String) -> Bool {
        var stored = Array(hash.utf8CString)
        guard stored.count <= parley_pwhash_strbytes() else { return true }
        stored += [CChar](repeating: 0, count: parley_pwhash_strbytes() - stored.count)
        return crypto_pwhash_str_needs_rehash(&stored, operations, memoryBytes) != 0
    }
}
