import Foundation

/// A numeric IPv4/IPv6 bind address (no name resolution: a server binds to a literal).
struct SocketAddress {
    private var storage = sockaddr_storage()
    let isIPv6: Bool

    init?(host: String, port: Int) {
        guard (0...65535).contains(port) else { return nil }
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
            isIPv6 = false
            storage = SocketAddress.store(v4)
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
            isIPv6 = true
            storage = SocketAddress.store(v6)
            return
        }
        return nil
    }

    private static func store<T>(_ address: T) -> sockaddr_storage {
        var storage = sockaddr_storage()
        withUnsafeBytes(of: address) { source in
            withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) }
        }
        return storage
    }

    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>) -> T) -> T {
        var copy = storage
        return withUnsafePointer(to: &copy) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1, body)
        }
    }

    /// The numeric host of a peer address, or "" if it is not IPv4/IPv6.
    static func numericHost(_ address: UnsafePointer<sockaddr>) -> String {
        let length: socklen_t
        switch Int32(address.pointee.sa_family) {
        case AF_INET: length = socklen_t(MemoryLayout<sockaddr_in>.size)
        case AF_INET6: length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        default: return ""
        }
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else {
            return ""
        }
        let end = host.firstIndex(of: 0) ?? host.count
        return String(decoding: host[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
