import CSodium

/// libsodium must be initialised once before use; `sodium_init` is itself thread-safe and idempotent,
/// and a lazily initialised static runs it exactly once.
enum Sodium {
    static let ready: Bool = sodium_init() >= 0
}
