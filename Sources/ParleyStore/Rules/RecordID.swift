import ParleyPrimitives

/// Record ids: 16 random bytes as 22 base64url characters. Random, so they reveal neither counts
/// nor order and can be made without asking the database; never sequential integers.
enum RecordID {
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Base64URL.encode(bytes)
    }
}
