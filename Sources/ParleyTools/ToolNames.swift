/// The function names providers see for Parley's tools, and the way back.
///
/// A tool `docs/search` is offered as `docs__search`, every character outside `[a-zA-Z0-9_-]` replaced
/// by `_` (OpenAI accepts `^[a-zA-Z0-9_-]{1,64}$`). A name over 64 characters, or one two tools would
/// share, is cut and given a short hash of the tool id, so remote servers that change their lists at
/// run time can never stop Parley with a clash. The map is built per reply from the tools it offers;
/// names map back exactly through it, never by parsing a name.
struct ToolNames: Sendable {
    static let maxLength = 64

    /// Function name by tool id, for the given tool ids (in order; the first of a clash keeps its name).
    private(set) var names: [String: String] = [:]
    /// Tool ids whose name had to be cut or suffixed (the log says so).
    private(set) var renamed: [String] = []

    init(toolIDs: [String]) {
        var taken: Set<String> = []
        for id in toolIDs {
            let plain = Self.plainName(id)
            var name = plain
            if name.count > Self.maxLength || taken.contains(name) {
                name = Self.suffixed(plain, id: id)
                var attempt = 1
                while taken.contains(name) {
                    name = Self.suffixed(plain, id: "\(id)#\(attempt)")
                    attempt += 1
                }
                renamed.append(id)
            }
            taken.insert(name)
            names[id] = name
        }
    }

    /// `<server>__<tool>` with every character outside `[a-zA-Z0-9_-]` as `_`.
    static func plainName(_ toolID: String) -> String {
        let joined = toolID.replacingOccurrences(of: "/", with: "__")
        return String(joined.unicodeScalars.map { scalar -> Character in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", "_", "-": Character(scalar)
            default: "_"
            }
        })
    }

    /// The name cut to leave room for `_` and eight hex digits of the id's FNV-1a hash.
    static func suffixed(_ name: String, id: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in id.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        let hex = String(hash & 0xffff_ffff, radix: 16)
        let suffix = "_" + String(repeating: "0", count: 8 - hex.count) + hex
        return String(name.prefix(maxLength - suffix.count)) + suffix
    }
}
