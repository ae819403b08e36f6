import Foundation

/// The MCP protocol versions Parley speaks, and the wire details that differ between them.
enum MCPProtocol {
    /// Offered in `initialize`; the newest version with the initialize handshake.
    static let handshakeVersion = "2025-11-25"
    /// What a server may answer `initialize` with (ours, or an older one we also speak).
    static let handshakeVersions = ["2025-11-25", "2025-06-18", "2025-03-26"]
    /// The single-exchange version (no initialize, no session; every request carries its envelope).
    static let statelessVersion = "2026-07-28"

    static func isStateless(_ version: String) -> Bool { version == statelessVersion }

    /// A header value as the 2026-07-28 HTTP transport writes it: as is when it is plain visible
    /// ASCII, else `=?base64?…?=` of its UTF-8.
    static func headerValue(_ text: String) -> String {
        let plain = text.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }
            && !text.hasPrefix(" ") && !text.hasSuffix(" ") && !text.hasPrefix("=?")
        return plain ? text : "=?base64?" + Data(text.utf8).base64EncodedString() + "?="
    }
}
