import Foundation

/// A block of client addresses: an IPv4 or IPv6 CIDR (`10.0.0.0/8`, `fd00::/8`) or one address
/// (`127.0.0.2`, `::1`, the same as `/32` and `/128`). Used for the reverse proxies Parley trusts
/// (PARLEY_TRUSTED_PROXIES). Host bits past the prefix are ignored (`10.1.2.3/8` is `10.0.0.0/8`).
///
/// An IPv4 client reaching a dual-stack socket shows up as `::ffff:a.b.c.d`; that address is
/// matched as the IPv4 address it carries, so `10.0.0.0/8` covers it too.
public struct AddressRange: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6), host bits cleared.
    private let network: [UInt8]
    public let prefixLength: Int

    /// Parses `address` or `address/prefix`; nil when it is neither (names are not resolved).
    public init?(_ text: String) {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2, let bytes = Self.bytes(String(parts[0])) else { return nil }
        let bits = bytes.count * 8
        var length = bits
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...bits).contains(given), parts[1].allSatisfy(\.isASCII) else {
                return nil
            }
            length = given
        }
        prefixLength = length
        network = Self.masked(bytes, prefixLength: length)
    }

    /// Whether the numeric address `address` (as `HTTPRequest.remoteAddress` gives it) is in the range.
    public func contains(_ address: String) -> Bool {
        guard var bytes = Self.bytes(address) else { return false }
        if bytes.count == 16, network.count == 4, bytes[0..<10].allSatisfy({ $0 == 0 }),
           bytes[10] == 0xff, bytes[11] == 0xff {
            bytes = Array(bytes[12...])
        }
        return bytes.count == network.count && Self.masked(bytes, prefixLength: prefixLength) == network
    }

    public var description: String {
        let host: String
        if network.count == 4 {
            host = network.map(String.init).joined(separator: ".")
        } else {
            var address = in6_addr()
            withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: network) }
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
            host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return "\(host)/\(prefixLength)"
    }

    // MARK: - Bytes

    /// The address's bytes in network order: 4 for IPv4, 16 for IPv6; nil for anything else.
    /// A zone (`fe80::1%eth0`) is dropped.
    private static func bytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: v4) { Array($0) }
        }
        let host = text.split(separator: "%", maxSplits: 1).first.map(String.init) ?? text
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            return withUnsafeBytes(of: v6) { Array($0) }
        }
        return nil
    }

    private static func masked(_ bytes: [UInt8], prefixLength: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let kept = min(8, max(0, prefixLength - index * 8))
            return kept == 8 ? byte : byte & ~(UInt8(0xff) >> kept)
        }
    }
}

extension Array where Element == AddressRange {
    /// Whether any range holds `address`.
    public func contains(address: String) -> Bool {
        contains { $0.contains(address) }
    }
}
