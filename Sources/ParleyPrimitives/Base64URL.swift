import Foundation

/// Module ParleyPrimitives: encodings of standard values that modules which must not know each other
/// share. It must never know a Parley type or a C library.
///
/// URL-safe base64 without padding (RFC 4648 §5), for ids, cursors and secrets that travel in URLs,
/// cookies and headers: the store's record ids and page cursors, ParleyAuth's session and token secrets.
public enum Base64URL {
    /// The 64 characters of the URL-safe alphabet, in value order.
    @usableFromInline static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Encoded directly into the result: every record id is made here, so it is on each start's path
    /// (Foundation's base64 plus three `replacingOccurrences` cost 5% of a start's CPU).
    /// Inlinable, so callers in other modules get it specialised as they did when it was their own.
    @inlinable
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let input = Array(bytes)
        let length = (input.count * 4 + 2) / 3
        return String(unsafeUninitializedCapacity: length) { output in
            var out = 0
            var index = 0
            while index + 3 <= input.count {
                let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                for shift in [18, 12, 6, 0] as [UInt32] {
                    output[out] = alphabet[Int(value >> shift & 63)]
                    out += 1
                }
                index += 3
            }
            let rest = input.count - index
            if rest > 0 {
                let value = UInt32(input[index]) << 16 | (rest == 2 ? UInt32(input[index + 1]) << 8 : 0)
                for shift in ([18, 12, 6] as [UInt32]).prefix(rest + 1) {
                    output[out] = alphabet[Int(value >> shift & 63)]
                    out += 1
                }
            }
            return out
        }
    }

    /// nil for anything that is not unpadded base64url.
    public static func decode(_ text: String) -> [UInt8]? {
        guard !text.contains("="), !text.contains("+"), !text.contains("/") else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        return Data(base64Encoded: base64).map { [UInt8]($0) }
    }
}
