import ParleyPrimitives

/// A data-model path as A2UI binds it: an RFC 6901 JSON Pointer (`/user/name`), or inside a template a
/// pointer relative to the list item (`name`). Why its own type: every path a model writes is checked
/// once here (escapes, and keys that would reach a JavaScript object's prototype on the page), and
/// resolved and written the same way by the validator.
public struct JSONPointer: Sendable, Equatable {
    /// Keys refused in any path and in any data-model object: on a page that keeps the model in plain
    /// objects they would reach `Object.prototype`.
    public static let refusedKeys: Set<String> = ["__proto__", "constructor", "prototype"]

    public let tokens: [String]
    public let isRelative: Bool

    /// Reads a path; throws what is wrong with it. `allowRelative`: a template's item-relative path, where
    /// `.` is the item itself (as the page reads it). `maxSegments`: at most this many segments (the
    /// surface's depth limit), so a path of slashes cannot make a long walk.
    public init(_ text: String, allowRelative: Bool = true,
                maxSegments: Int = SurfaceLimits().maxDepth) throws(SurfaceError) {
        if text.isEmpty || text == "/" {
            tokens = []
            isRelative = false
            return
        }
        isRelative = !text.hasPrefix("/")
        if isRelative && !allowRelative {
            throw SurfaceError("'\(text.prefix(80))' is not a JSON Pointer (it must start with '/')")
        }
        if text == "." {
            tokens = []
            return
        }
        let slashes = text.utf8.reduce(0) { $0 + ($1 == UInt8(ascii: "/") ? 1 : 0) }
        guard (isRelative ? slashes + 1 : slashes) <= maxSegments else {
            throw SurfaceError("the path '\(text.prefix(80))' has more than \(maxSegments) segments")
        }
        var parsed: [String] = []
        for raw in (isRelative ? Substring(text) : text.dropFirst()).split(separator: "/", omittingEmptySubsequences: false) {
            var token = ""
            var escaped = false
            for character in raw {
                if escaped {
                    guard character == "0" || character == "1" else {
                        throw SurfaceError("'\(text.prefix(80))' is not a JSON Pointer ('~' must be followed by 0 or 1)")
                    }
                    token.append(character == "0" ? "~" : "/")
                    escaped = false
                } else if character == "~" {
                    escaped = true
                } else {
                    token.append(character)
                }
            }
            if escaped { throw SurfaceError("'\(text.prefix(80))' is not a JSON Pointer (it ends with '~')") }
            if Self.refusedKeys.contains(token) {
                throw SurfaceError("the path '\(text.prefix(80))' uses the key '\(token)', which Parley refuses")
            }
            parsed.append(token)
        }
        tokens = parsed
    }

    /// The value at this pointer in `root`, nil when there is none.
    public func resolve(in root: JSON) -> JSON? {
        var current = root
        for token in tokens {
            switch current {
            case .object(let fields):
                guard let next = fields[token] else { return nil }
                current = next
            case .array(let items):
                guard let index = Int(token), items.indices.contains(index) else { return nil }
                current = items[index]
            default:
                return nil
            }
        }
        return current
    }

    /// `root` with `value` put at this pointer (objects made on the way), or what is there removed when
    /// `value` is nil.
    public func write(_ value: JSON?, into root: JSON) -> JSON {
        Self.write(value, into: root, tokens[...])
    }

    private static func write(_ value: JSON?, into node: JSON, _ rest: ArraySlice<String>) -> JSON {
        guard let token = rest.first else { return value ?? .null }
        switch node {
        case .array(var items):
            if let index = Int(token), items.indices.contains(index) {
                if rest.count == 1, value == nil {
                    items.remove(at: index)
                } else {
                    items[index] = write(value, into: items[index], rest.dropFirst())
                }
                return .array(items)
            }
            if token == "-" || Int(token) == items.count, let value {
                items.append(write(value, into: .null, rest.dropFirst()))
                return .array(items)
            }
            return node
        case .object(var fields):
            if rest.count == 1, value == nil {
                fields[token] = nil
            } else {
                fields[token] = write(value, into: fields[token] ?? .null, rest.dropFirst())
            }
            return .object(fields)
        default:
            guard value != nil else { return node }
            return .object([token: write(value, into: .null, rest.dropFirst())])
        }
    }
}
