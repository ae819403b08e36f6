import CSodium
import ParleyPrimitives

/// Session and API-token secrets: 256 random bits shown to their owner once, stored only as a
/// SHA-256 digest, so a copy of the database signs nobody in.
public enum SecretToken {
    /// A new secret: `prefix` then 43 URL-safe base64 characters (32 random bytes).
    public static func generate(prefix: String = "") -> String {
        var bytes = [UInt8](repeating: 0, count: 32)
        precondition(Sodium.ready, "libsodium failed to initialise")
        randombytes_buf(&bytes, bytes.count)
        return prefix + Base64URL.encode(bytes)
    }

    /// The digest stored in place of a secret (lower-case hex SHA-256).
    public static func digest(_ secret: String) -> String {
        var out = [UInt8](repeating: 0, count: parley_hash_sha256_bytes())
        let bytes = Array(secret.utf8)
        crypto_hash_sha256(&out, bytes, UInt64(bytes.count))
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: out.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }
}
