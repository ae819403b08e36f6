/// Why a credential operation failed.
public enum AuthError: Error, Equatable, Sendable {
    /// libsodium could not initialise or hash (out of memory for Argon2id).
    case cryptoUnavailable
}
